import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { db } from "@/lib/db";
import { newId } from "@/lib/ids";
import { mintSession, type SessionPerson } from "./session-token";
import { untilAnswers } from "./until-ready";

// Real `next start` instances of the production build, for tests that need several app processes sharing
// one PostgreSQL. `next build` must have run (the test command builds before these tests).

export const INSTANCE_SECRET = "instances-test-secret";
export const INSTANCE_METRICS_TOKEN = "instances-test-metrics-token";
// Production refuses to start without a seal key; instances use the test process's (so what they seal verifies
// there), or this one where no key is set (a benchmark).
const INSTANCE_SEAL_KEY = Buffer.from("instances-only-audit-seal-key-32").toString("base64");

export interface AppInstance {
  url: string;
  pid: number;
  /** Everything the process wrote to stdout and stderr so far (stderr is also shown). */
  output(): string;
  /** The exit code, or the signal's name, once the process has exited. */
  exited: Promise<number | string>;
  stop(): Promise<void>;
}

/** `nodeArgs` go to Node.js before Next.js's own arguments (a benchmark's `--cpu-prof`, say). */
export async function startInstance(
  port: number,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<AppInstance> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...nodeArgs,
      path.join("node_modules", "next", "dist", "bin", "next"),
      "start",
      "-H",
      "127.0.0.1",
      "-p",
      String(port),
    ],
    {
      env: {
        ...process.env,
        NODE_ENV: "production",
        NEXTAUTH_URL: `http://127.0.0.1:${port}`,
        NEXTAUTH_SECRET: INSTANCE_SECRET,
        TOOLGATE_JOBS: "off",
        METRICS_TOKEN: INSTANCE_METRICS_TOKEN,
        AUDIT_SEAL_KEY: process.env.AUDIT_SEAL_KEY ?? INSTANCE_SEAL_KEY,
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    process.stderr.write(chunk);
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  const url = `http://127.0.0.1:${port}`;
  await untilAnswers(`${url}/login`, {
    child,
    name: "next start",
    timeoutMs: 60_000,
    intervalMs: 200,
    output: () => output,
  });
  return {
    url,
    pid: child.pid!,
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A real session: its row in the database and the cookie that stands for it, as a sign-in makes them. */
export async function sessionCookie(user: SessionPerson): Promise<string> {
  const token = await mintSession(user, {
    secret: INSTANCE_SECRET,
    sessionId: newId("ses"),
    saveRow: (row) => db.session.create({ data: row, select: { id: true } }),
  });
  return `next-auth.session-token=${token}`;
}

/** The session cookie of one person in the database, with their own role unless another is given. */
export async function personCookie(userId: string, role?: SessionPerson["role"]): Promise<string> {
  const person = await db.user.findUniqueOrThrow({
    where: { id: userId },
    select: { id: true, email: true, tenantId: true, role: true },
  });
  return sessionCookie({ ...person, role: role ?? person.role });
}

/** Calls a server action over HTTP exactly as the browser does, by its id in the build's manifest. */
export async function callAction(
  base: string,
  page: string,
  exportedName: string,
  args: unknown[],
  cookie: string,
): Promise<string> {
  const manifest = JSON.parse(readFileSync(path.join(".next", "server", "server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { exportedName?: string }>;
  };
  const id = Object.entries(manifest.node).find(([, entry]) => entry.exportedName === exportedName)?.[0];
  if (!id) throw new Error(`no server action named ${exportedName} in the build`);
  const response = await fetch(`${base}${page}`, {
    method: "POST",
    headers: { "next-action": id, "content-type": "text/plain;charset=UTF-8", accept: "text/x-component", cookie },
    body: JSON.stringify(args),
  });
  return response.text();
}
