import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversationOver } from "../support/api-over-http";
import { ownInstances } from "../support/own-instances";
import { createWorld, type World } from "../support/world";

// The official MCP conformance suite's server scenarios that apply to toolgate. The suite's CLI sends no
// Authorization header, so a small proxy adds the agent's key and passes everything else (the Host and Origin
// headers included) through unchanged.

const SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

let proxy: http.Server;
let world: World;
let conversation: string;

describe("the MCP conformance suite", () => {
  const [instance] = ownInstances(1);

  beforeAll(async () => {
    world = await createWorld();
    conversation = await conversationOver(instance.url, world.keys.agent, world.customers.ana);
    const target = new URL(instance.url);
    proxy = http.createServer((request, response) => {
      const forwarded = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: request.url,
          method: request.method,
          headers: { ...request.headers, authorization: `Bearer ${world.keys.agent}` },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forwarded.on("error", () => response.destroy());
      request.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
  });

  it.each(SCENARIOS)("%s passes", async (scenario) => {
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/mcp?conversation=${conversation}`;
    const cli = path.join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
    // Asynchronously: the proxy answers from this process while the suite runs.
    const run = await new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(
        process.execPath,
        [cli, "server", "--url", url, "--scenario", scenario],
        { timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}\n${stderr}` }),
      );
    });
    expect(run.code, run.output).toBe(0);
    expect(run.output).not.toMatch(/FAIL/);
  });
});
