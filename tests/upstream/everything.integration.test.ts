import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { closeUpstreams } from "@/lib/upstream/servers/client";
import { addRemoteServer } from "@/lib/upstream/servers/servers";
import { findServer } from "@/lib/upstream/sql";
import { db } from "@/lib/db";
import { conversationFor, getTools, getToolsAs, newCallKey, propose, proposeAs } from "../support/api";
import { connectMcp } from "../support/mcp-client";
import { MCP_BASE, routeFetch } from "../support/mcp-route";
import { createWorld, type World } from "../support/world";
import { adminOf, EVERYTHING_SERVER, reviewAll } from "./support";

// server-everything from npm over Streamable HTTP behind toolgate: the kinds of tool result it exercises (text,
// numbers, structured content, images, resource links, annotated content) reach the agent as the upstream sent them.

let world: World;
const children: ChildProcess[] = [];
let conversation: string;

const KINDS = [
  "echo",
  "get-sum",
  "get-structured-content",
  "get-tiny-image",
  "get-resource-links",
  "get-annotated-message",
];

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

/** server-everything on a free port, over `transport`, once it says it listens. */
async function startEverything(transport: "streamableHttp" | "sse"): Promise<number> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, transport], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      if (/listening|running/.test(chunk.toString())) resolve();
    });
    child.on("exit", (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  return port;
}

beforeAll(async () => {
  process.env.OUTBOUND_ALLOWED_HOSTS = "127.0.0.1";
  world = await createWorld();
  const port = await startEverything("streamableHttp");
  const added = await addRemoteServer(adminOf(world), { name: "everything", url: `http://127.0.0.1:${port}/mcp` });
  expect(added.ok).toBe(true);
  const server = (await findServer(db, world.tenantId, "everything"))!;
  await reviewAll(world, server, Object.fromEntries(KINDS.map((name) => [name, "allow" as const])));
  conversation = await conversationFor(world.keys.agent, {
    customer_id: world.customers.ana,
    tools: KINDS.map((name) => `everything__${name}`),
  });
}, 60_000);

afterAll(async () => {
  await closeUpstreams();
  for (const child of children) child.kill();
});

const call = async (tool: string, args: Record<string, unknown>) => {
  const answer = await propose(
    world.keys.agent,
    conversation,
    { name: `everything__${tool}`, arguments: args },
    newCallKey(),
  );
  expect(answer.json.code).toBe("upstream.called");
  return answer.json.model.result as {
    content: Record<string, unknown>[];
    structuredContent?: unknown;
    isError: boolean;
  };
};

describe("server-everything over Streamable HTTP behind toolgate", () => {
  it("lists the reviewed tools in toolgate's, OpenAI's and Anthropic's shapes", async () => {
    const own = await getTools(world.keys.agent, conversation);
    expect((own.json.tools as { name: string }[]).map((tool) => tool.name)).toEqual(
      expect.arrayContaining(KINDS.map((name) => `everything__${name}`)),
    );
    const openai = await getToolsAs(world.keys.agent, conversation, "openai");
    expect(openai.json.tools).toContainEqual({
      type: "function",
      function: expect.objectContaining({
        name: "everything__get-sum",
        parameters: expect.objectContaining({ type: "object" }),
      }),
    });
    const anthropic = await getToolsAs(world.keys.agent, conversation, "anthropic");
    expect(anthropic.json.tools).toContainEqual(
      expect.objectContaining({ name: "everything__echo", input_schema: expect.objectContaining({ type: "object" }) }),
    );
  });

  it("passes text, numbers and structured content through", async () => {
    expect((await call("echo", { message: "hi there" })).content).toEqual([{ type: "text", text: "Echo: hi there" }]);
    expect(JSON.stringify((await call("get-sum", { a: 2, b: 3 })).content)).toContain("5");
    const weather = await call("get-structured-content", { location: "Chicago" });
    expect(weather.structuredContent).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
    });
  });

  it("passes images, resource links and annotated content through", async () => {
    const image = await call("get-tiny-image", {});
    expect(image.content).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "image", mimeType: "image/png" })]),
    );
    const links = await call("get-resource-links", { count: 2 });
    expect(links.content.filter((item) => item.type === "resource_link")).toHaveLength(2);
    const annotated = await call("get-annotated-message", { messageType: "error", includeImage: false });
    expect(annotated.content[0]).toMatchObject({ type: "text", annotations: expect.any(Object) });
  });

  it("runs the tools called in OpenAI's and Anthropic's shapes", async () => {
    const openai = await proposeAs(world.keys.agent, conversation, "openai-chat", {
      role: "assistant",
      tool_calls: [
        {
          id: "call_sum",
          type: "function",
          function: { name: "everything__get-sum", arguments: JSON.stringify({ a: 20, b: 22 }) },
        },
      ],
    });
    expect(openai.json.results[0]).toMatchObject({ code: "upstream.called", ref: "call_sum" });
    expect(JSON.stringify(openai.json.results[0].result)).toContain("42");
    const anthropic = await proposeAs(world.keys.agent, conversation, "anthropic", {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_echo", name: "everything__echo", input: { message: "from claude" } }],
    });
    expect(anthropic.json.results[0]).toMatchObject({
      code: "upstream.called",
      ref: "toolu_echo",
      result: { content: [{ type: "text", text: "Echo: from claude" }] },
    });
  });

  it("refuses arguments its schema does not allow, before sending", async () => {
    const refused = await propose(
      world.keys.agent,
      conversation,
      { name: "everything__get-sum", arguments: { a: "two", b: 3 } },
      newCallKey(),
    );
    expect(refused.json).toMatchObject({ code: "schema.invalid", model: { paths: ["a"] } });
  });

  it("lists and calls the upstream tools through toolgate's own MCP endpoint", async () => {
    let client: Client | null = null;
    try {
      client = await connectMcp(MCP_BASE, world.keys.agent, conversation, routeFetch);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("everything__echo");
      const answer = await client.callTool({ name: "everything__echo", arguments: { message: "via mcp" } });
      expect(JSON.stringify(answer.structuredContent)).toContain("Echo: via mcp");
    } finally {
      await client?.close();
    }
  });

  it("falls back to the older HTTP+SSE transport for a server that predates Streamable HTTP", async () => {
    const port = await startEverything("sse");
    const added = await addRemoteServer(adminOf(world), { name: "legacy", url: `http://127.0.0.1:${port}/sse` });
    expect(added).toMatchObject({ ok: true, data: { added: expect.arrayContaining(["echo"]) } });
    await reviewAll(world, (await findServer(db, world.tenantId, "legacy"))!, { echo: "allow" });
    const legacy = await conversationFor(world.keys.agent, {
      customer_id: world.customers.ana,
      tools: ["legacy__echo"],
    });
    const answer = await propose(
      world.keys.agent,
      legacy,
      { name: "legacy__echo", arguments: { message: "old transport" } },
      newCallKey(),
    );
    expect(answer.json).toMatchObject({ code: "upstream.called" });
    expect(answer.json.model.result).toMatchObject({ content: [{ type: "text", text: "Echo: old transport" }] });
  });
});
