import { execFile, spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowSelfRegistration } from "../support/admin-changes";
import { sessionCookie, startInstance, type AppInstance } from "../support/app-instances";
import { freePort } from "../../scripts/pg-cluster";
import { conversationOver } from "../support/api-over-http";
import { headerProxy, type HeaderProxy } from "../support/header-proxy";
import { createWorld, type World } from "../support/world";

// The MCP conformance suite's 2026-07-28 scenarios (0.2.0-alpha.12, installed as `mcp-conformance-alpha` beside
// 0.1.16, on Node 20 through tests/support/node20-glob.mjs) against the production build: the protocol scenarios
// through a proxy that adds the agent's key and the conversation (as headers: the suite's raw requests drop a
// query string), and the authorization-server scenarios against toolgate's own
// OAuth endpoints, the consent given over HTTP by a signed-in agent. Checks that cannot pass here are listed,
// each with its reason, in conformance-2026-expected-failures.yml; the suite fails on any other failure, and on
// an expected failure that now passes.

const SERVER_SCENARIOS = [
  "server-stateless",
  "http-header-validation",
  "dns-rebinding-protection",
  "tools-list",
  "tasks-capability-negotiation",
];
const CLI = path.join("node_modules", "mcp-conformance-alpha", "dist", "index.js");
const SHIM = path.join("tests", "support", "node20-glob.mjs");
const EXPECTED = path.join("tests", "hardening", "conformance-2026-expected-failures.yml");

let instance: AppInstance;
let proxy: HeaderProxy;
let world: World;
let conversation: string;

function run(args: string[]) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(process.execPath, ["--import", `./${SHIM}`, CLI, ...args], { timeout: 90_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

describe("the MCP conformance suite, revision 2026-07-28", () => {
  beforeAll(async () => {
    instance = await startInstance(await freePort(), { DATABASE_URL: process.env.DATABASE_URL! });
    world = await createWorld();
    conversation = await conversationOver(instance.url, world.keys.agent, world.customers.ana);
    proxy = await headerProxy(instance.url, {
      authorization: `Bearer ${world.keys.agent}`,
      "x-toolgate-conversation": conversation,
    });
  }, 120_000);

  afterAll(async () => {
    await proxy?.close();
    await instance?.stop();
  });

  it.each(SERVER_SCENARIOS)("%s passes, but for its listed expected failures", async (scenario) => {
    const url = `${proxy.url}/api/mcp`;
    const result = await run(["server", "--url", url, "--scenario", scenario, "--expected-failures", EXPECTED]);
    expect(result.code, result.output).toBe(0);
  });

  it("authorization-server-metadata-endpoint passes", async () => {
    const result = await run([
      "authorization",
      "--url",
      instance.url,
      "--scenario",
      "authorization-server-metadata-endpoint",
    ]);
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(/FAIL|SKIP/);
    expect(result.output).toMatch(/Passed: (\d+)\/\1, 0 failed/);
  });

  it("authorization-code-grant passes with a registered public client, the agent granting on the consent form", async () => {
    await allowSelfRegistration(world);
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/callback`;
    const registered = await fetch(`${instance.url}/api/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "MCP conformance",
        redirect_uris: [redirect],
        token_endpoint_auth_method: "none",
      }),
    });
    expect(registered.status).toBe(201);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const cookie = await sessionCookie({
      id: world.users.agent,
      role: "AGENT",
      tenantId: world.tenantId,
      email: "agent",
    });

    const child = spawn(
      process.execPath,
      [
        "--import",
        `./${SHIM}`,
        CLI,
        "authorization",
        "--url",
        instance.url,
        "--client-id",
        clientId,
        "--resource",
        `${instance.url}/api/mcp`,
        "-p",
        String(port),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    const authorizationUrl = await new Promise<URL>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no authorization URL:\n${output}`)), 60_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const line = output.split("\n").find((text) => text.startsWith(`${instance.url}/oauth/authorize?`));
        if (line) {
          clearTimeout(timer);
          resolve(new URL(line.trim()));
        }
      };
      child.stdout.on("data", read);
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    });
    const page = await fetch(authorizationUrl, { headers: { cookie } });
    expect(page.status, await page.clone().text()).toBe(200);
    const form = new URLSearchParams(authorizationUrl.searchParams);
    form.set("decision", "grant");
    form.append("scope_choice", "orders:read");
    const granted = await fetch(`${instance.url}/api/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, origin: instance.url, "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    expect(granted.status).toBe(303);
    await fetch(granted.headers.get("location")!);
    const code = await exited;
    expect(code, output).toBe(0);
    expect(output).not.toMatch(/FAIL|SKIP/);
    expect(output).toMatch(/authorization-code-grant: 1 passed, 0 failed/);
  }, 120_000);
});
