import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cp, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { INSTANCE_SECRET } from "../support/app-instances";
import { freePort } from "../../scripts/pg-cluster";
import { untilAnswers } from "../support/until-ready";
import { createWorld } from "../support/world";

// The production image without Docker (which cannot run here): the runtime stage of the Dockerfile is read, its
// COPY lines assembled from the build into a fresh folder, its ENV set, and its CMD started there. Then its
// HEALTHCHECK command passes, /api/ready is ready, the agent API answers, and SIGTERM stops it cleanly.

const PORT = await freePort();
let child: ChildProcess | null = null;

afterAll(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
});

interface RuntimeStage {
  env: Record<string, string>;
  copies: { from: string; to: string }[];
  cmd: string[];
  healthcheck: string[];
  user: string;
}

async function runtimeStage(): Promise<RuntimeStage> {
  const text = await readFile("Dockerfile", "utf8");
  const stage = text.slice(text.search(/^FROM \S+ AS runtime$/m));
  expect(stage.length).toBeGreaterThan(0);
  const env = Object.fromEntries(
    [...stage.matchAll(/^ENV (.+)$/gm)].flatMap((match) =>
      match[1].split(/\s+/).map((pair) => pair.split("=") as [string, string]),
    ),
  );
  const copies = [...stage.matchAll(/^COPY --from=build (?:--chown=\S+ )?\/app\/(\S+) (\S+)$/gm)].map((match) => ({
    from: match[1],
    to: match[2],
  }));
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(stage)![1]) as string[];
  const healthcheck = JSON.parse(/^HEALTHCHECK .* CMD (\[.*\])$/m.exec(stage)![1]) as string[];
  const user = /^USER (\S+)$/m.exec(stage)![1];
  return { env, copies, cmd, healthcheck, user };
}

describe("the standalone server, started as the Dockerfile starts it", () => {
  it("passes its HEALTHCHECK, is ready against the migrated database, serves the API and drains on SIGTERM", async () => {
    const stage = await runtimeStage();
    expect(stage.user).toBe("node");
    expect(stage.copies.map((copy) => copy.from)).toEqual([".next/standalone", ".next/static", "prisma/migrations"]);
    const dir = await mkdtemp(path.join(tmpdir(), "toolgate-image-"));
    for (const copy of stage.copies) await cp(copy.from, path.join(dir, copy.to), { recursive: true });

    expect(stage.env).toMatchObject({ NODE_ENV: "production", HOSTNAME: "0.0.0.0" });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: "production",
      ...stage.env,
      PORT: String(PORT),
      HOSTNAME: "127.0.0.1",
      DATABASE_URL: process.env.DATABASE_URL!,
      NEXTAUTH_URL: `http://127.0.0.1:${PORT}`,
      NEXTAUTH_SECRET: INSTANCE_SECRET,
      PAYMENT_PROVIDER_URL: process.env.PAYMENT_PROVIDER_URL!,
      PAYMENT_PROVIDER_SECRET: process.env.PAYMENT_PROVIDER_SECRET!,
      METRICS_TOKEN: "image-metrics-token",
      AUDIT_SEAL_KEY: process.env.AUDIT_SEAL_KEY!,
    };
    let output = "";
    const [command, ...args] = stage.cmd;
    const server = spawn(command === "node" ? process.execPath : command, args, {
      cwd: dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = server;
    server.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));

    const base = `http://127.0.0.1:${PORT}`;
    await untilAnswers(`${base}/api/health`, {
      child: server,
      name: "the server",
      timeoutMs: 60_000,
      intervalMs: 250,
      output: () => output,
    });
    const [check, ...checkArgs] = stage.healthcheck;
    const healthcheck = spawnSync(check === "node" ? process.execPath : check, checkArgs, { env, encoding: "utf8" });
    expect(healthcheck.status).toBe(0);

    const ready = await fetch(`${base}/api/ready`);
    expect(await ready.json()).toEqual({ status: "ready" });
    expect(ready.status).toBe(200);
    const checked = await fetch(`${base}/api/ready`, { headers: { authorization: "Bearer image-metrics-token" } });
    expect(await checked.json()).toEqual({
      status: "ready",
      checks: { database: "ok", migrations: "ok", jobs: "ok", shutdown: "ok" },
    });
    expect((await fetch(`${base}/api/metrics`)).status).toBe(401);
    expect(
      await (await fetch(`${base}/api/metrics`, { headers: { authorization: "Bearer image-metrics-token" } })).text(),
    ).toContain("toolgate_approval_queue_depth");

    const world = await createWorld();
    const opened = await fetch(`${base}/api/v1/conversations`, {
      method: "POST",
      headers: { authorization: `Bearer ${world.keys.agent}` },
      body: JSON.stringify({ customer_id: world.customers.ana }),
    });
    expect(opened.status).toBe(201);

    server.kill("SIGTERM");
    expect(await exited).toBe(143);
    expect(output).toContain('"event":"shutdown.done"');
    child = null;
  });
});
