import { z } from "zod";

// Every setting the running app reads from the environment, in one schema: names, what each accepts and its default.
// Read through `env()` where it is used; `instrumentation.ts` reads it once at start, so a bad value stops the start
// with the variable's name and what it accepts. Development scaffolding (scripts/) reads its own variables.

const Seconds = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 24 * 3600)
    .default(fallback);
const Millis = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(365 * 24 * 3600_000)
    .default(fallback);
/** A 32-byte key as settings give it, in base64 or (64 digits) hex; the caller checks its length. */
export const keyBytes = (text: string): Buffer => Buffer.from(text, /^[0-9a-f]{64}$/i.test(text) ? "hex" : "base64");
const Count = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);
const List = z
  .string()
  .default("")
  .transform((value) =>
    value
      .split(",")
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean),
  );

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: z.string().min(1).optional(),
  DATABASE_POOL_MAX: Count(10, 1000),
  /** The public address people use; `https://` turns on HSTS and `__Host-` cookies. */
  NEXTAUTH_URL: z.preprocess((value) => (value === "" ? undefined : value), z.url().optional()),
  NEXTAUTH_SECRET: z.string().min(1).optional(),
  /** 32 random bytes in base64 or hex: encrypts stored secrets (lib/security/secrets.ts checks the length). */
  SECRETS_KEY: z.string().min(1).optional(),
  /**
   * 32 random bytes in base64 or hex: the key of the audit logs' seals (lib/audit/heads/keys.ts). The database never holds
   * it, so someone who can rewrite the database cannot recompute the chain. Required for sealing and verifying.
   */
  AUDIT_SEAL_KEY: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z
      .string()
      .refine((text) => keyBytes(text).length === 32, "32 bytes in base64 or hex (openssl rand -base64 32)")
      .optional(),
  ),
  /** The id recorded in each seal made with AUDIT_SEAL_KEY, so a rotated key's seals still verify. */
  AUDIT_SEAL_KEY_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,32}$/, "letters, digits, '.', '_' or '-', at most 32")
    .default("1"),
  /** Keys retired by a rotation, still needed to verify the seals they made: `id:key` pairs, comma separated. */
  AUDIT_SEAL_RETIRED_KEYS: z.string().default(""),
  /**
   * Where each sealing pass publishes the signed heads it made (JSON Lines), outside the database and away from
   * AUDIT_SEAL_KEY's host: a file, appended to, or a folder (ending in `/`) where each pass writes a new file and
   * changes none, e.g. another host's mount or an object store mounted as files (which often cannot append).
   */
  AUDIT_HEAD_FILE: z.string().min(1).optional(),
  /**
   * How many reverse proxies stand in front of the app and append to `X-Forwarded-For`. 0 (the default): no
   * forwarded header from a client is believed; the client is the socket's address.
   */
  TRUST_PROXY: z
    .string()
    .default("0")
    .transform((value) => (value === "true" ? 1 : value === "false" ? 0 : Number(value)))
    .pipe(z.number().int().min(0).max(10)),
  /** Extra hosts (`host[:port]`, `*.host`) allowed to send server actions, comma separated; the app's own host always is. */
  SERVER_ACTIONS_ALLOWED_ORIGINS: z
    .string()
    .default("")
    .transform((value) =>
      value
        .split(",")
        .map((entry) => entry.trim())
        .filter(Boolean),
    ),
  /** A session unused this long ends. */
  SESSION_IDLE_SECONDS: Seconds(30 * 60),
  /** A session ends this long after sign-in, however busy. */
  SESSION_MAX_SECONDS: Seconds(8 * 3600),
  /** Hosts and origins, besides loopback and the hosts of NEXTAUTH_URL and OAUTH_ISSUER, that may reach /api/mcp (comma separated). */
  MCP_ALLOWED_HOSTS: List,
  MCP_ALLOWED_ORIGINS: List,
  /**
   * The OAuth issuer and MCP resource's origin (decision 017) when it differs from NEXTAUTH_URL's, e.g. the load
   * balancer's address in front of several instances. Without either (development only: production requires
   * NEXTAUTH_URL), the request's own Host.
   */
  OAUTH_ISSUER: z.url().optional(),
  /**
   * Hosts (`host` or `host:port`, IPv6 without brackets) this server may send to although they resolve to a
   * loopback, private or link-local address: local fakes in development and tests. Empty (the default): none.
   */
  OUTBOUND_ALLOWED_HOSTS: List,
  /** Slack's Web API, where held calls are posted for tenants that connect a Slack app; a local fake in tests. */
  SLACK_API_URL: z
    .url({ protocol: /^https?$/ })
    .transform((url) => (url.endsWith("/") ? url : `${url}/`))
    .default("https://slack.com/api/"),

  /**
   * A JSON file of the local (stdio) MCP servers toolgate guards, defined only here since each runs a command:
   * `{"servers":[{"tenant":"t_acme","name":"files","command":"npx","args":[...]}]}` (docs/UPSTREAM.md).
   */
  UPSTREAM_SERVERS_FILE: z.string().min(1).optional(),
  /** How long toolgate waits for an upstream MCP server to connect or to answer one call. */
  UPSTREAM_TIMEOUT_MS: Millis(30_000),
  /** How often every upstream server's tools are listed again (a changed definition is quarantined). */
  UPSTREAM_SYNC_INTERVAL_MS: Millis(600_000),

  PAYMENT_PROVIDER_URL: z.url().optional(),
  PAYMENT_PROVIDER_SECRET: z.string().min(1).optional(),
  PAYMENT_PROVIDER_TIMEOUT_MS: Millis(2000),
  PAYMENT_PROVIDER_ATTEMPTS: Count(3, 10),
  /** A refund unsettled this long is listed for a person to investigate. */
  RECONCILE_INVESTIGATE_AFTER_MS: Millis(30 * 60_000),
  /** The provider's idempotency-key retention: past it nothing is re-sent. */
  RECONCILE_RESEND_WINDOW_MS: Millis(20 * 3600_000),

  SMTP_HOST: z.string().min(1).default("127.0.0.1"),
  SMTP_PORT: z.coerce.number().int().min(1).max(65_535).default(2525),
  /** "0" uses STARTTLS when the server offers it; anything else (the default, for the local sink) does not. */
  SMTP_IGNORE_TLS: z.string().default("1"),
  MAIL_FROM: z.string().min(1).default("toolgate <no-reply@toolgate.local>"),
  /** Twelve tries span about an hour (2 s doubling to 2,048 s), so a mail server or receiver down that long loses nothing. */
  OUTBOX_MAX_ATTEMPTS: Count(12, 100),

  /** "off" starts no background jobs on this instance. */
  TOOLGATE_JOBS: z.string().default("on"),
  OUTBOX_INTERVAL_MS: Millis(2000),
  RECONCILE_INTERVAL_MS: Millis(30_000),
  RECONCILE_BACKOFF_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 3600_000)
    .default(15_000),
  EXPIRY_INTERVAL_MS: Millis(10_000),
  RATE_PRUNE_INTERVAL_MS: Millis(60_000),
  WATCH_PRUNE_INTERVAL_MS: Millis(60_000),
  SEAL_INTERVAL_MS: Millis(10_000),
  EXPOSURE_PRUNE_INTERVAL_MS: Millis(600_000),
  SHUTDOWN_TIMEOUT_MS: Millis(25_000),
  OTEL_SERVICE_NAME: z.string().min(1).default("toolgate"),
  /** The bearer token /api/metrics wants, and /api/ready's detail; required in production (see `startupProblems`). */
  METRICS_TOKEN: z.preprocess((value) => (value === "" ? undefined : value), z.string().min(16).optional()),
});

export type Env = z.infer<typeof EnvSchema>;

const NAMES = Object.keys(EnvSchema.shape);
let parsed: { raw: string; settings: Readonly<Env> } | null = null;

// A production server (`next start`) reads its settings once: nothing changes its environment after the start, and
// reading every variable again on each of a request's calls showed in the agent API's profile. `next dev` reloads
// .env files under a running server, and tests change variables between cases.
const FIXED_ENVIRONMENT = process.env.NEXT_RUNTIME === "nodejs" && process.env.NODE_ENV === "production";

/**
 * The settings as the environment gives them; a bad value throws, naming the variable and what it accepts. Parsed
 * once and kept while the variables it reads hold the same text, or for good in a production server.
 */
export function env(): Readonly<Env> {
  if (parsed && FIXED_ENVIRONMENT) return parsed.settings;
  let raw = "";
  for (const name of NAMES) {
    const value = process.env[name];
    raw += value === undefined ? "\0" : `=${value}\0`;
  }
  if (parsed?.raw === raw) return parsed.settings;
  const result = EnvSchema.safeParse(process.env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`invalid environment: ${problems.join("; ")}`);
  }
  parsed = { raw, settings: Object.freeze(result.data) };
  return parsed.settings;
}

/** Whether people reach the app over HTTPS, as its configured public address says (never a request header). */
export const servedOverHttps = (): boolean => env().NEXTAUTH_URL?.startsWith("https://") ?? false;

/**
 * Why this instance must not start, checked by `instrumentation.ts` only (a build runs in production mode too,
 * without the secrets): a bad value, or a setting production cannot do without. Each names the variable.
 */
export function startupProblems(): string[] {
  let settings: Readonly<Env>;
  try {
    settings = env();
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
  if (settings.NODE_ENV !== "production") return [];
  const problems: string[] = [];
  if (!settings.NEXTAUTH_URL)
    problems.push(
      "NEXTAUTH_URL: required in production, the public address people use (https://toolgate.example.com); without it the OAuth issuer and the discovery documents would come from each request's Host header",
    );
  if (!settings.METRICS_TOKEN)
    problems.push(
      "METRICS_TOKEN: required in production, at least 16 characters (openssl rand -hex 24); /api/metrics wants it",
    );
  if (!settings.AUDIT_SEAL_KEY)
    problems.push(
      "AUDIT_SEAL_KEY: required in production, 32 bytes in base64 or hex (openssl rand -base64 32), the same on every instance; without it the audit logs are not sealed",
    );
  return problems;
}
