import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "../lib/embedded-db";
import { startLocalExternals } from "../lib/external-services";
import { migrate } from "../lib/migrate";

// `npm run dev`: with DATABASE_URL, that PostgreSQL; without, the embedded PGlite in .toolgate/. It starts the
// fake payment provider and an SMTP sink unless PAYMENT_PROVIDER_URL / SMTP_HOST name real ones, migrates,
// seeds the demo data and starts Next.js. `--production` serves the last `next build` instead.

const root = process.cwd();
const stateDir = path.join(root, ".toolgate");
const production = process.argv.includes("--production");
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "127.0.0.1";

/** A random secret kept in .toolgate/ (git-ignored), the same on every start. */
async function devSecret(name: string): Promise<string> {
  const file = path.join(stateDir, name);
  const existing = await readFile(file, "utf8").catch(() => "");
  if (existing.trim()) return existing.trim();
  const secret = randomBytes(32).toString("base64url");
  await mkdir(stateDir, { recursive: true });
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}

function runChild(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "inherit", env });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

let embedded: EmbeddedDatabase | null = null;
const env: NodeJS.ProcessEnv = { ...process.env };
if (!env.DATABASE_URL) {
  const pglitePort = Number(process.env.PGLITE_PORT ?? 5544);
  embedded = await startEmbeddedDatabase(path.join(stateDir, "pglite"), pglitePort);
  env.DATABASE_URL = embedded.url;
  env.DATABASE_POOL_MAX = "1";
  console.log(`embedded database (PGlite) in .toolgate/pglite on 127.0.0.1:${pglitePort}`);
}

const externals = await startLocalExternals({
  providerPort: Number(process.env.FAKE_PROVIDER_PORT ?? 4010),
  smtpPort: Number(process.env.SMTP_SINK_PORT ?? 2525),
  logMail: true,
});
Object.assign(env, externals.env);
if (externals.env.PAYMENT_PROVIDER_URL) console.log(`fake payment provider on ${externals.env.PAYMENT_PROVIDER_URL}`);
if (externals.env.SMTP_HOST) console.log(`SMTP sink on ${externals.env.SMTP_HOST}:${externals.env.SMTP_PORT} (messages are printed here)`);

const migrated = await migrate(env.DATABASE_URL!);
console.log(`migrations: ${migrated.applied.length} applied, ${migrated.skipped.length} already applied`);

const tsx = path.join(root, "node_modules", "tsx", "dist", "cli.mjs");
if (!production || process.argv.includes("--seed")) {
  const seeded = await runChild(process.execPath, [tsx, "scripts/seed.ts"], env);
  if (seeded !== 0) process.exit(seeded);
}

env.NEXTAUTH_URL ??= `http://${host === "0.0.0.0" ? "localhost" : host}:${port}`;
env.NEXTAUTH_SECRET ??= await devSecret("nextauth-secret");
env.SECRETS_KEY ??= await devSecret("secrets-key");
const next = path.join(root, "node_modules", "next", "dist", "bin", "next");
const code = await runChild(process.execPath, [next, production ? "start" : "dev", "-H", host, "-p", String(port)], env);
await externals.close();
await embedded?.stop();
process.exit(code);
