import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversationOver } from "../support/api-over-http";
import { headerProxy, type HeaderProxy } from "../support/header-proxy";
import { ownInstances } from "../support/own-instances";
import { createWorld, type World } from "../support/world";

// The official MCP conformance suite's server scenarios that apply to toolgate. The suite's CLI sends no
// Authorization header, so a small proxy adds the agent's key and passes everything else (the Host and Origin
// headers included) through unchanged.

const SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

let proxy: HeaderProxy;
let world: World;
let conversation: string;

describe("the MCP conformance suite", () => {
  const [instance] = ownInstances(1);

  beforeAll(async () => {
    world = await createWorld();
    conversation = await conversationOver(instance.url, world.keys.agent, world.customers.ana);
    proxy = await headerProxy(instance.url, { authorization: `Bearer ${world.keys.agent}` });
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it.each(SCENARIOS)("%s passes", async (scenario) => {
    const url = `${proxy.url}/api/mcp?conversation=${conversation}`;
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
