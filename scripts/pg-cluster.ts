import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

// A throwaway PostgreSQL cluster for tests and benchmarks: private folder, private port, loopback only.

const BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";

export interface Cluster {
  /** Over TCP on 127.0.0.1. */
  url: string;
  /** The same database over the cluster's Unix-domain socket, for a client on this machine. */
  socketUrl: string;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

function postgresUid(): { uid: number; gid: number } {
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

/** initdb refuses to run as root, so as root the cluster belongs to the postgres user. */
function run(command: string, args: string[], asRoot: boolean): void {
  const file = path.join(BIN, command);
  if (asRoot) execFileSync("runuser", ["-u", "postgres", "--", file, ...args], { stdio: "pipe" });
  else execFileSync(file, args, { stdio: "pipe" });
}

/**
 * `durable` keeps PostgreSQL's own defaults for writing to disk (fsync, synchronous commit, full pages), as a
 * deployment runs; without it the cluster trades durability for speed, which tests can afford.
 */
export async function startCluster({ durable = false } = {}): Promise<Cluster> {
  if (!existsSync(path.join(BIN, "initdb"))) {
    throw new Error(`PostgreSQL binaries not found in ${BIN}: apt-get install -y postgresql (or set PG_BIN)`);
  }
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), "toolgate-pg-"));
  const data = path.join(dir, "data");
  if (asRoot) {
    const { uid, gid } = postgresUid();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--locale=C"], asRoot);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    ...(durable ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]),
    "-c max_connections=300",
    "-c shared_buffers=256MB",
  ].join(" ");
  run("pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "server.log"), "-w", "-t", "60", "start"], asRoot);
  let stopped = false;
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    socketUrl: `postgresql://postgres@localhost:${port}/postgres?host=${encodeURIComponent(dir)}`,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"], asRoot);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A fresh, empty database beside the one `url` names (dropped first if it exists); returns its URL. */
export async function freshDatabase(url: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name ${name}`);
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}
