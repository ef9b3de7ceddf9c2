import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { startLocalExternals } from "./dev/external-services";
import { warmUp } from "./dev/warm-up";
import { migrate, roleOf } from "../lib/db/migrate";
import { removeEmbeddedDatabase, startEmbeddedDatabase, type EmbeddedDatabase } from "./embedded-database";
import { assertPortFree, keptSecret, processRunning } from "./processes";

// `npm run dev`: with DATABASE_URL, that PostgreSQL; without, the embedded PostgreSQL server in .toolgate/. It
// starts the fake payment provider and an SMTP sink unless PAYMENT_PROVIDER_URL / SMTP_HOST name real ones,
// migrates, seeds the demo data into a new database and starts Next.js. `--production` (`npm start`) serves the
// last `next build` instead; `--reset` deletes .toolgate/ first (database, keys, secret) and starts afresh.

const root = process.cwd();
// TOOLGATE_STATE_DIR moves it elsewhere (the first-run test starts from an empty folder).
const stateDir = path.resolve(process.env.TOOLGATE_STATE_DIR ?? path.join(root, ".toolgate"));
const lockFile = path.join(stateDir, "dev.pid");
const production = process.argv.includes("--production");
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "127.0.0.1";

/** One run per folder: a second would share the embedded database and the ports. */
async function takeFolderLock(): Promise<void> {
  const holder = Number((await readFile(lockFile, "utf8").catch(() => "")).trim());
  if (holder && holder !== process.pid && processRunning(holder, "dev.ts")) {
    throw new Error(
      `toolgate is already running from this folder (pid ${holder}): stop it (Ctrl-C in its terminal) first`,
    );
  }
  await mkdir(stateDir, { recursive: true });
  await writeFile(lockFile, String(process.pid));
}

async function isNewDatabase(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ seeded: boolean }>(`SELECT EXISTS (SELECT 1 FROM "Tenant") AS seeded`);
    return !rows[0].seeded;
  } finally {
    await client.end();
  }
}

let child: ReturnType<typeof spawn> | null = null;
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    stopping = true;
    child?.kill(signal);
  });
}

function runChild(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    child = spawn(command, args, { stdio: "inherit", env });
    child.on("exit", (code, signal) => {
      child = null;
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const closers: (() => Promise<void>)[] = [];
let code = 1;
try {
  await takeFolderLock();
  closers.push(() => rm(lockFile, { force: true }));
  if (process.argv.includes("--reset") && existsSync(stateDir)) {
    await removeEmbeddedDatabase(stateDir);
    for (const entry of ["dev-keys.json", "nextauth-secret", "secrets-key", "audit-seal-key", "audit-heads.jsonl"])
      await rm(path.join(stateDir, entry), { force: true });
    console.log(
      "--reset: removed the embedded database, the demo API keys, the session secret, the stored-secrets key, the seal key and the kept heads in .toolgate/",
    );
  }
  await assertPortFree(port, "the app", "PORT");

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TOOLGATE_KEYS_FILE: process.env.TOOLGATE_KEYS_FILE ?? path.join(stateDir, "dev-keys.json"),
  };
  // Migrations run as the tables' owner; the app connects as a role that owns nothing (docs/decisions/016).
  let migrationUrl = process.env.MIGRATION_DATABASE_URL ?? env.DATABASE_URL;
  if (!env.DATABASE_URL) {
    const dbPort = Number(process.env.EMBEDDED_PG_PORT ?? 5544);
    const embedded: EmbeddedDatabase = await startEmbeddedDatabase(stateDir, dbPort);
    closers.unshift(embedded.stop);
    env.DATABASE_URL = embedded.appUrl;
    migrationUrl = embedded.url;
    console.log(`embedded PostgreSQL in .toolgate/postgres on 127.0.0.1:${dbPort}`);
  }

  if (!process.env.PAYMENT_PROVIDER_URL) {
    await assertPortFree(
      Number(process.env.FAKE_PROVIDER_PORT ?? 4010),
      "the fake payment provider",
      "FAKE_PROVIDER_PORT",
    );
  }
  if (!process.env.SMTP_HOST)
    await assertPortFree(Number(process.env.SMTP_SINK_PORT ?? 2525), "the SMTP sink", "SMTP_SINK_PORT");
  const externals = await startLocalExternals({
    providerPort: Number(process.env.FAKE_PROVIDER_PORT ?? 4010),
    smtpPort: Number(process.env.SMTP_SINK_PORT ?? 2525),
    logMail: true,
  });
  closers.unshift(externals.close);
  Object.assign(env, externals.env);
  if (externals.env.PAYMENT_PROVIDER_URL) console.log(`fake payment provider on ${externals.env.PAYMENT_PROVIDER_URL}`);
  if (externals.env.SMTP_HOST)
    console.log(`SMTP sink on ${externals.env.SMTP_HOST}:${externals.env.SMTP_PORT} (messages are printed here)`);

  const migrated = await migrate(migrationUrl!, { appRole: roleOf(env.DATABASE_URL!) });
  console.log(`migrations: ${migrated.applied.length} applied, ${migrated.skipped.length} already applied`);

  const tsx = path.join(root, "node_modules", "tsx", "dist", "cli.mjs");
  const seedWanted = process.argv.includes("--seed") || (!production && (await isNewDatabase(env.DATABASE_URL!)));
  if (seedWanted && !stopping) {
    const seeded = await runChild(process.execPath, [tsx, "--conditions=react-server", "scripts/seed.ts"], env);
    if (seeded !== 0) throw new Error("seeding the demo data failed (see above)");
  } else if (!production) {
    console.log(
      `demo data already in the database; API keys in ${path.relative(root, env.TOOLGATE_KEYS_FILE!)} (npm run dev -- --reset starts afresh)`,
    );
  }

  env.NEXTAUTH_URL ??= `http://${host === "0.0.0.0" ? "localhost" : host}:${port}`;
  env.NEXTAUTH_SECRET ??= await keptSecret(path.join(stateDir, "nextauth-secret"), 32);
  // Encrypts the webhook URL and signing secret stored per tenant (production sets SECRETS_KEY itself).
  env.SECRETS_KEY ??= await keptSecret(path.join(stateDir, "secrets-key"), 32);
  // Keys the audit logs' seals; kept here, never in the database (production sets AUDIT_SEAL_KEY itself).
  env.AUDIT_SEAL_KEY ??= await keptSecret(path.join(stateDir, "audit-seal-key"), 32);
  env.AUDIT_HEAD_FILE ??= path.join(stateDir, "audit-heads.jsonl");
  // A production start refuses to run without a metrics token (development answers loopback without one).
  if (production) env.METRICS_TOKEN ??= await keptSecret(path.join(stateDir, "metrics-token"), 24);
  const next = path.join(root, "node_modules", "next", "dist", "bin", "next");
  if (!stopping) {
    const running = runChild(
      process.execPath,
      [next, production ? "start" : "dev", "-H", host, "-p", String(port)],
      env,
    );
    if (!production) {
      const started = Date.now();
      void warmUp(`http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`, () => stopping || !child).then(
        (warm) =>
          warm &&
          console.log(
            `the first pages are compiled (${Math.round((Date.now() - started) / 1000)} s): open ${env.NEXTAUTH_URL}`,
          ),
      );
    }
    code = await running;
  }
  if (stopping) code = 0;
} catch (error) {
  console.error(`\ntoolgate could not start: ${(error as Error).message}`);
} finally {
  for (const close of closers) {
    await close().catch((error: Error) => console.error(`while stopping: ${error.message}`));
  }
}
process.exit(code);
