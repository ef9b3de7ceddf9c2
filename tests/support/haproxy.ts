import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { untilReady } from "./until-ready";

// A real HAProxy (Debian's package; .ci/run installs it) in front of app instances: round robin, health checks on
// /api/ready, a request id per request, and a retry on another instance only when a connection could not be made
// (never once a request was sent, so a proposal is never delivered twice by the balancer).

export const HAPROXY = "/usr/sbin/haproxy";

export interface Balancer {
  url: string;
  /** The backends HAProxy currently routes to. */
  up(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startHaproxy(port: number, statsPort: number, backends: number[]): Promise<Balancer> {
  if (!existsSync(HAPROXY)) throw new Error(`${HAPROXY} is missing: apt-get install -y haproxy (.ci/run does)`);
  const dir = await mkdtemp(path.join(tmpdir(), "toolgate-haproxy-"));
  const config = path.join(dir, "haproxy.cfg");
  await writeFile(
    config,
    `global
  maxconn 2000

defaults
  mode http
  timeout connect 1s
  # Generous on a loaded two-core test machine: a slow answer is not a dead instance.
  timeout check 5s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch
  retry-on conn-failure

frontend app
  bind 127.0.0.1:${port}
  unique-id-format %[uuid()]
  http-request set-header X-Request-Id %[unique-id]
  default_backend instances

backend instances
  balance roundrobin
  option httpchk GET /api/ready
  http-check expect status 200
  default-server inter 500ms fall 3 rise 2
${backends.map((backend, index) => `  server app${index + 1} 127.0.0.1:${backend} check`).join("\n")}

frontend stats
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /stats
`,
  );
  const child = spawn(HAPROXY, ["-db", "-f", config], { stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const up = async () => {
    const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
    return csv
      .split("\n")
      .map((line) => line.split(","))
      .filter((fields) => fields[0] === "instances" && fields[1].startsWith("app") && fields[17]?.startsWith("UP"))
      .map((fields) => fields[1]);
  };
  // Ready once haproxy sees every backend up (before it listens, a refused fetch reads as not yet).
  await untilReady(async () => (await up()).length === backends.length, {
    child,
    name: "haproxy",
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  return {
    url: `http://127.0.0.1:${port}`,
    up,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
