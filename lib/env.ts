import { z } from "zod";

// Settings read from the environment once, on first use (tests set the environment before they import the
// app). A bad value stops with the variable's name and what it accepts.

const Seconds = (fallback: number) => z.coerce.number().int().min(60).max(30 * 24 * 3600).default(fallback);

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** The public address people use; `https://` turns on HSTS and `__Host-` cookies. */
  NEXTAUTH_URL: z.url().optional(),
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
    .transform((value) => value.split(",").map((entry) => entry.trim()).filter(Boolean)),
  /** A session unused this long ends. */
  SESSION_IDLE_SECONDS: Seconds(30 * 60),
  /** A session ends this long after sign-in, however busy. */
  SESSION_MAX_SECONDS: Seconds(8 * 3600),
});

export type Env = z.infer<typeof EnvSchema>;

let parsed: Env | null = null;

export function env(): Env {
  if (parsed) return parsed;
  const result = EnvSchema.safeParse(process.env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`invalid environment: ${problems.join("; ")}`);
  }
  parsed = result.data;
  return parsed;
}

/** Whether people reach the app over HTTPS, as its configured public address says (never a request header). */
export const servedOverHttps = (): boolean => env().NEXTAUTH_URL?.startsWith("https://") ?? false;
