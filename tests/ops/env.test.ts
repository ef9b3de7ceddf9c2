import { afterEach, describe, expect, it } from "vitest";
import { env, startupProblems } from "@/lib/env";

// The settings the app reads, as `instrumentation.ts` checks them at start: a bad value stops the start with the
// variable's name and what it accepts.

const saved = { ...process.env };
const SEAL_KEY = Buffer.alloc(32, 7).toString("base64");
afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});

describe("environment settings", () => {
  it("gives each setting its default, parses once and reads the environment again when it changes", () => {
    delete process.env.PAYMENT_PROVIDER_ATTEMPTS;
    delete process.env.OUTBOX_INTERVAL_MS;
    expect(env()).toMatchObject({ PAYMENT_PROVIDER_ATTEMPTS: 3, OUTBOX_INTERVAL_MS: 2000, SMTP_IGNORE_TLS: "1" });
    expect(env()).toBe(env());
    process.env.PAYMENT_PROVIDER_ATTEMPTS = "5";
    process.env.MCP_ALLOWED_ORIGINS = " https://A.example , https://b.example ";
    expect(env()).toMatchObject({
      PAYMENT_PROVIDER_ATTEMPTS: 5,
      MCP_ALLOWED_ORIGINS: ["https://a.example", "https://b.example"],
    });
  });

  it("refuses a bad value by the variable's name and what it accepts", () => {
    process.env.PAYMENT_PROVIDER_ATTEMPTS = "three";
    expect(() => env()).toThrow(/PAYMENT_PROVIDER_ATTEMPTS: .*number/);
    process.env.PAYMENT_PROVIDER_ATTEMPTS = "3";
    process.env.SHUTDOWN_TIMEOUT_MS = "0";
    expect(() => env()).toThrow(/SHUTDOWN_TIMEOUT_MS: .*>=1/);
    process.env.SHUTDOWN_TIMEOUT_MS = "25000";
    process.env.PAYMENT_PROVIDER_URL = "not a url";
    expect(() => env()).toThrow(/PAYMENT_PROVIDER_URL/);
  });

  it("refuses a production start without NEXTAUTH_URL, naming it: the issuer would come from the Host header", () => {
    process.env.AUDIT_SEAL_KEY = SEAL_KEY;
    process.env.METRICS_TOKEN = "a-metrics-token-of-enough-length";
    delete process.env.NEXTAUTH_URL;
    process.env.OAUTH_ISSUER = "https://toolgate.example";
    (process.env as Record<string, string>).NODE_ENV = "production";
    expect(startupProblems()).toEqual([expect.stringMatching(/^NEXTAUTH_URL: required in production.*Host header/)]);
    delete process.env.OAUTH_ISSUER;
    expect(startupProblems()).toEqual([expect.stringMatching(/^NEXTAUTH_URL: required in production/)]);
    process.env.NEXTAUTH_URL = "";
    expect(startupProblems()).toEqual([expect.stringMatching(/^NEXTAUTH_URL: required in production/)]);
    process.env.NEXTAUTH_URL = "https://toolgate.example";
    expect(startupProblems()).toEqual([]);
    delete process.env.NEXTAUTH_URL;
    (process.env as Record<string, string>).NODE_ENV = "development";
    expect(startupProblems()).toEqual([]);
  });

  it("refuses a production start without METRICS_TOKEN, or with a short one, and asks nothing of development", () => {
    process.env.NEXTAUTH_URL = "https://toolgate.example";
    process.env.AUDIT_SEAL_KEY = SEAL_KEY;
    delete process.env.METRICS_TOKEN;
    (process.env as Record<string, string>).NODE_ENV = "production";
    expect(startupProblems()).toEqual([expect.stringMatching(/^METRICS_TOKEN: required in production/)]);
    process.env.METRICS_TOKEN = "";
    expect(startupProblems()).toEqual([expect.stringMatching(/^METRICS_TOKEN: required in production/)]);
    process.env.METRICS_TOKEN = "short";
    expect(startupProblems()).toEqual([expect.stringMatching(/METRICS_TOKEN: .*16/)]);
    process.env.METRICS_TOKEN = "a-metrics-token-of-enough-length";
    expect(startupProblems()).toEqual([]);
    delete process.env.METRICS_TOKEN;
    (process.env as Record<string, string>).NODE_ENV = "development";
    expect(startupProblems()).toEqual([]);
  });

  it("refuses a production start without AUDIT_SEAL_KEY; a key that is not 32 bytes stops any start", () => {
    process.env.NEXTAUTH_URL = "https://toolgate.example";
    process.env.METRICS_TOKEN = "a-metrics-token-of-enough-length";
    (process.env as Record<string, string>).NODE_ENV = "production";
    for (const unset of [undefined, ""]) {
      if (unset === undefined) delete process.env.AUDIT_SEAL_KEY;
      else process.env.AUDIT_SEAL_KEY = unset;
      expect(startupProblems()).toEqual([expect.stringMatching(/^AUDIT_SEAL_KEY: required in production/)]);
    }
    delete process.env.METRICS_TOKEN;
    expect(startupProblems()).toEqual([
      expect.stringMatching(/^METRICS_TOKEN: required/),
      expect.stringMatching(/^AUDIT_SEAL_KEY: required/),
    ]);
    process.env.METRICS_TOKEN = "a-metrics-token-of-enough-length";
    process.env.AUDIT_SEAL_KEY = SEAL_KEY;
    expect(startupProblems()).toEqual([]);
    process.env.AUDIT_SEAL_KEY = "ab".repeat(32);
    expect(startupProblems()).toEqual([]);
    (process.env as Record<string, string>).NODE_ENV = "development";
    for (const bad of ["short", Buffer.alloc(16).toString("base64"), "ab".repeat(31)]) {
      process.env.AUDIT_SEAL_KEY = bad;
      expect(startupProblems()).toEqual([expect.stringMatching(/AUDIT_SEAL_KEY: 32 bytes in base64 or hex/)]);
    }
    delete process.env.AUDIT_SEAL_KEY;
    expect(startupProblems()).toEqual([]);
  });
});
