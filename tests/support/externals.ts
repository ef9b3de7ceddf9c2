import nodemailer from "nodemailer";
import { afterAll, beforeAll } from "vitest";
import { startFakeProvider, type Fault, type FakeProvider } from "@/scripts/dev/fake-provider";
import { startSmtpSink, type SmtpSink } from "@/scripts/dev/smtp-sink";

// A fake provider and SMTP sink of this test file's own, so faults it queues and deliveries it counts are
// never mixed up with another file's. Must be called before anything in the file issues a refund.

export interface Externals {
  provider: FakeProvider;
  sink: SmtpSink;
  faults(faults: Fault[], clear?: boolean): Promise<void>;
  stats(): Promise<{
    refundRequests: number;
    lookups: number;
    refunds: number;
    totalsByOrder: Record<string, number>;
    requestsByKey: Record<string, number>;
    lookupsByKey: Record<string, number>;
    faultsQueued: number;
  }>;
  reset(): Promise<void>;
}

export function ownExternals(): Externals {
  const handle = {} as Externals;
  beforeAll(async () => {
    handle.provider = await startFakeProvider();
    handle.sink = await startSmtpSink();
    Object.assign(process.env, {
      PAYMENT_PROVIDER_URL: handle.provider.url,
      PAYMENT_PROVIDER_SECRET: handle.provider.secret,
      SMTP_HOST: handle.sink.host,
      SMTP_PORT: String(handle.sink.port),
      PAYMENT_PROVIDER_TIMEOUT_MS: "300",
    });
    handle.faults = async (faults, clear = false) =>
      void (await fetch(`${handle.provider.url}/_faults`, { method: "POST", body: JSON.stringify({ faults, clear }) }));
    handle.stats = async () => (await fetch(`${handle.provider.url}/_stats`)).json();
    handle.reset = async () => void (await fetch(`${handle.provider.url}/_reset`, { method: "POST" }));
  });
  afterAll(async () => {
    await handle.provider?.close();
    await handle.sink?.close();
  });
  return handle;
}

/** A fake payment provider of this test file's own for instances of the build; `env()` is what they need to use it. */
export function ownProvider(): FakeProvider & { env(): Record<string, string> } {
  const handle = {} as FakeProvider & { env(): Record<string, string> };
  handle.env = () => ({ PAYMENT_PROVIDER_URL: handle.url, PAYMENT_PROVIDER_SECRET: handle.secret });
  beforeAll(async () => void Object.assign(handle, await startFakeProvider()));
  afterAll(async () => {
    await handle.close?.();
  });
  return handle;
}

/** An SMTP transport to the file's own sink, as the outbox delivers through. */
export const sinkTransport = (externals: Externals) =>
  nodemailer.createTransport({ host: externals.sink.host, port: externals.sink.port, secure: false, ignoreTLS: true });
