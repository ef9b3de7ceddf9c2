import { startFakeProvider } from "./fake-provider";
import { startSmtpSink } from "./smtp-sink";

/**
 * For development and tests: the fake payment provider and a local SMTP sink, unless the environment already
 * names real ones. Returns the environment the app needs to reach them.
 */
export async function startLocalExternals(
  options: { providerPort?: number; smtpPort?: number; logMail?: boolean } = {},
) {
  const env: Record<string, string> = {};
  const closers: (() => Promise<void>)[] = [];
  if (!process.env.PAYMENT_PROVIDER_URL) {
    const provider = await startFakeProvider({ port: options.providerPort });
    env.PAYMENT_PROVIDER_URL = provider.url;
    env.PAYMENT_PROVIDER_SECRET = provider.secret;
    closers.push(provider.close);
  }
  if (!process.env.SMTP_HOST) {
    const sink = await startSmtpSink({
      port: options.smtpPort,
      onMessage: options.logMail
        ? (message) =>
            console.log(`[mail sink] to ${message.to.join(", ")}: ${/^Subject: (.*)$/m.exec(message.raw)?.[1] ?? ""}`)
        : undefined,
    });
    env.SMTP_HOST = sink.host;
    env.SMTP_PORT = String(sink.port);
    closers.push(sink.close);
  }
  return { env, close: async () => void (await Promise.all(closers.map((close) => close()))) };
}
