import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { db } from "@/lib/db";
import { closeUpstreams } from "@/lib/upstream/servers/client";
import { providerName } from "@/lib/upstream/servers/definition";
import { findServer } from "@/lib/upstream/sql";
import { syncServer } from "@/lib/upstream/servers/sync";
import { conversationFor, getTools, getToolsAs, newCallKey, propose, proposeAs } from "../support/api";
import { connectMcp } from "../support/mcp-client";
import { MCP_BASE, routeFetch } from "../support/mcp-route";
import { createWorld, type World } from "../support/world";
import { addTestServer, reviewAll } from "./support";
import { startTestUpstream, type TestUpstream } from "./test-upstream";

// MCP lets a server name a tool with `.` and 64 characters, so its namespaced name can reach 96; OpenAI's and
// Anthropic's APIs (and the MCP hosts that pass names on to them) refuse any name outside ^[A-Za-z0-9_-]{1,64}$.
// Such a tool is offered under a name they take, and a call by that name runs the tool it stands for.

let world: World;
let upstream: TestUpstream;
const others: TestUpstream[] = [];
const SECRET = "provider-names-bearer-secret";
const DOTTED = "search.open_tickets";
const LONG = "close_ticket_and_notify_the_reporter_with_a_summary_of_the_fix";
const TOOLS = ["tickets__create_ticket", `tickets__${DOTTED}`, `tickets__${LONG}`];
const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

beforeAll(async () => {
  process.env.OUTBOUND_ALLOWED_HOSTS = "127.0.0.1";
  world = await createWorld();
  upstream = await startTestUpstream(SECRET);
  upstream.state.tools.push(
    {
      name: DOTTED,
      description: "Searches the open tickets.",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      annotations: { readOnlyHint: true },
    },
    {
      name: LONG,
      description: "Closes a ticket and tells its reporter.",
      inputSchema: { type: "object", properties: { ticket: { type: "integer" } }, required: ["ticket"] },
    },
  );
  await addTestServer(world, upstream, "tickets", { create_ticket: "hold", [DOTTED]: "allow", [LONG]: "hold" });
});

afterAll(async () => {
  await closeUpstreams();
  await upstream.close();
  for (const other of others) await other.close();
});

const open = (tools = TOOLS) => conversationFor(world.keys.agent, { customer_id: world.customers.ana, tools });

/** The names a provider format lists, in listing order, for the conversation's upstream tools. */
async function offered(conversation: string, format: "openai" | "anthropic" | "mcp"): Promise<string[]> {
  const listed = (await getToolsAs(world.keys.agent, conversation, format)).json.tools;
  const names = listed.map((tool) => (format === "openai" ? tool.function.name : tool.name) as string);
  return names.filter((name) => name.startsWith("tickets__"));
}

describe("an upstream tool whose name a model provider refuses", () => {
  it("is listed under a name OpenAI, Anthropic and MCP hosts take, and under its own in toolgate's format", async () => {
    const conversation = await open();
    const own = (await getTools(world.keys.agent, conversation)).json.tools as { name: string }[];
    expect(own.map((tool) => tool.name)).toEqual(expect.arrayContaining(TOOLS));
    for (const format of ["openai", "anthropic", "mcp"] as const) {
      const names = await offered(conversation, format);
      expect(names).toHaveLength(3);
      expect(new Set(names).size).toBe(3);
      for (const name of names) expect(name).toMatch(PROVIDER_NAME);
      // A name a provider takes is left as it is; the others keep their server's prefix and read like the original.
      expect(names).toContain("tickets__create_ticket");
      expect(names).toContainEqual(expect.stringMatching(/^tickets__search_open_tickets_[0-9a-f]{12}$/));
      expect(names).toContainEqual(
        expect.stringMatching(/^tickets__close_ticket_and_notify_the_reporter_with__[0-9a-f]{12}$/),
      );
    }
    expect(await offered(conversation, "openai")).toEqual(await offered(conversation, "mcp"));
  });

  it("runs the tool it stands for when an OpenAI model calls it by that name, logged under the tool's own", async () => {
    const conversation = await open();
    const name = (await offered(conversation, "openai")).find((offer) => offer.includes("search"))!;
    const sent = upstream.state.received.length;
    const answer = await proposeAs(world.keys.agent, conversation, "openai-chat", {
      role: "assistant",
      tool_calls: [{ id: "call_search", type: "function", function: { name, arguments: '{"text":"refund"}' } }],
    });
    expect(answer.json.results[0]).toMatchObject({ code: "upstream.called", ref: "call_search" });
    expect(upstream.state.received.slice(sent)).toEqual([
      expect.objectContaining({ name: DOTTED, arguments: { text: "refund" } }),
    ]);
    const call = await db.toolCall.findUniqueOrThrow({ where: { id: answer.json.results[0].id } });
    expect(call.toolName).toBe(`tickets__${DOTTED}`);
  });

  it("holds the tool it stands for when an Anthropic model calls it, for the supervisor under the tool's own name", async () => {
    const conversation = await open();
    const name = (await offered(conversation, "anthropic")).find((offer) => offer.includes("close"))!;
    const sent = upstream.state.received.length;
    const answer = await proposeAs(
      world.keys.agent,
      conversation,
      "anthropic",
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_close", name, input: { ticket: 7 } }] },
      newCallKey(),
    );
    expect(answer.json.results[0]).toMatchObject({ code: "approval.required", ref: "toolu_close" });
    expect(upstream.state.received.length).toBe(sent);
    const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: answer.json.results[0].approval!.id } });
    expect(request.toolName).toBe(`tickets__${LONG}`);
  });

  it("is not a way into a tool the conversation was not opened with", async () => {
    const wide = await open();
    const name = (await offered(wide, "openai")).find((offer) => offer.includes("search"))!;
    const narrow = await open(["tickets__create_ticket"]);
    const sent = upstream.state.received.length;
    const refused = await propose(world.keys.agent, narrow, { name, arguments: { text: "x" } }, newCallKey());
    expect(refused.json.code).toBe("tool.not-available");
    expect(upstream.state.received.length).toBe(sent);
    expect(await offered(narrow, "openai")).toEqual(["tickets__create_ticket"]);
  });

  it("is listed and called by that name through toolgate's MCP endpoint with the SDK's client", async () => {
    const conversation = await open();
    let client: Client | null = null;
    try {
      client = await connectMcp(MCP_BASE, world.keys.agent, conversation, routeFetch);
      const { tools } = await client.listTools();
      for (const tool of tools) expect(tool.name).toMatch(PROVIDER_NAME);
      const name = tools.map((tool) => tool.name).find((offer) => offer.startsWith("tickets__search"))!;
      const answer = await client.callTool({ name, arguments: { text: "via mcp" } });
      expect(answer.isError).toBeFalsy();
      expect(upstream.state.received.at(-1)).toMatchObject({ name: DOTTED, arguments: { text: "via mcp" } });
    } finally {
      await client?.close();
    }
  });

  it("is not listed when another tool of its server is named as it would be offered, and that tool runs", async () => {
    const other = await startTestUpstream("impostor-bearer-secret");
    others.push(other);
    const impostor = providerName(`impostor__${DOTTED}`).slice("impostor__".length);
    const readOnly = { type: "object" as const, properties: { text: { type: "string" } } };
    other.state.tools.push(
      { name: DOTTED, description: "Searches.", inputSchema: readOnly, annotations: { readOnlyHint: true } },
      { name: impostor, description: "Also searches.", inputSchema: readOnly, annotations: { readOnlyHint: true } },
    );
    await addTestServer(world, other, "impostor", { [DOTTED]: "allow", [impostor]: "allow" });
    const conversation = await conversationFor(world.keys.agent, {
      customer_id: world.customers.ana,
      tools: [`impostor__${DOTTED}`, `impostor__${impostor}`],
    });
    const listed = (await getToolsAs(world.keys.agent, conversation, "openai")).json.tools;
    const names = listed.map((tool) => tool.function.name as string).filter((name) => name.startsWith("impostor__"));
    expect(names).toEqual([`impostor__${impostor}`]);
    const answer = await propose(world.keys.agent, conversation, { name: names[0], arguments: { text: "x" } });
    expect(answer.json.code).toBe("upstream.called");
    expect(other.state.received).toEqual([expect.objectContaining({ name: impostor })]);
  });

  it("is not listed while a twin of its offered name, quarantined since, is in the conversation: a call would run the twin", async () => {
    const twinServer = await startTestUpstream("twin-bearer-secret");
    others.push(twinServer);
    const twinName = providerName(`twin__${DOTTED}`).slice("twin__".length);
    const text = { type: "object" as const, properties: { text: { type: "string" } } };
    const twin = { name: twinName, description: "Reads.", inputSchema: text, annotations: { readOnlyHint: true } };
    twinServer.state.tools.push({ name: DOTTED, description: "Closes what it finds.", inputSchema: text }, twin);
    const server = await addTestServer(world, twinServer, "twin", { [DOTTED]: "hold", [twinName]: "allow" });
    const conversation = await conversationFor(world.keys.agent, {
      customer_id: world.customers.ana,
      tools: [`twin__${DOTTED}`, `twin__${twinName}`],
    });
    const twinOffered = async () => {
      const listed = (await getToolsAs(world.keys.agent, conversation, "openai")).json.tools;
      return listed.map((tool) => tool.function.name as string).filter((name) => name.startsWith("twin__"));
    };
    // The server changes the twin (quarantined, so not listed); the held tool's alias must not take its place, since
    // the call by that name is the twin's, and runs unheld once the server lists the twin as reviewed again.
    twin.description = "Reads, and more.";
    await syncServer(server);
    expect(await twinOffered()).toEqual([]);
    twin.description = "Reads.";
    await syncServer(server);
    expect(await twinOffered()).toEqual([`twin__${twinName}`]);
    const answer = await propose(world.keys.agent, conversation, {
      name: `twin__${twinName}`,
      arguments: { text: "x" },
    });
    expect(answer.json.code).toBe("upstream.called");
    expect(twinServer.state.received).toEqual([expect.objectContaining({ name: twinName })]);
  });
});

describe("a misspelled upstream tool's name", () => {
  const NO_SUCH_TOOL =
    "No tool of that name is offered in this conversation. Call only the tools listed for it, by their exact names.";
  const hinted = (name: string) => `${NO_SUCH_TOOL} Did you mean ${name}?`;

  /** Proposes `name` in toolgate's format: its code and model message, and the code and tool its row recorded. */
  async function misspelled(conversation: string, name: string) {
    const sent = upstream.state.received.length;
    const answer = await propose(world.keys.agent, conversation, { name, arguments: {} }, newCallKey());
    expect(upstream.state.received.length).toBe(sent);
    const row = await db.toolCall.findUniqueOrThrow({ where: { id: answer.json.id } });
    const logged = await db.decisionLog.findMany({ where: { toolCallId: answer.json.id } });
    expect(logged.map((entry) => [entry.toolName, entry.code])).toEqual([[row.toolName, row.code]]);
    return { code: answer.json.code, message: answer.json.model.message, row: [row.toolName, row.code] };
  }

  it("is told the tool's name, for a typo, a wrong server prefix or a single underscore", async () => {
    const conversation = await open();
    expect(await misspelled(conversation, "tickets__create_tiket")).toEqual({
      code: "tool.not-available",
      message: hinted("tickets__create_ticket"),
      row: ["(unknown)", "tool.not-available"],
    });
    expect(await misspelled(conversation, "ticket__create_ticket")).toMatchObject({
      code: "tool.not-available",
      message: hinted("tickets__create_ticket"),
    });
    // No upstream name without `__`: the gateway refuses it as unknown, and names the upstream tool all the same.
    expect(await misspelled(conversation, "tickets_create-ticket")).toEqual({
      code: "tool.unknown",
      message: hinted("tickets__create_ticket"),
      row: ["(unknown)", "tool.unknown"],
    });
    expect(await misspelled(conversation, `tickets__${DOTTED.replace("open", "opne")}`)).toMatchObject({
      message: hinted(`tickets__${DOTTED}`),
    });
  });

  it("is told the name a provider was offered, when that is the one misspelled, also over MCP with the SDK's client", async () => {
    const conversation = await open();
    const alias = (await offered(conversation, "openai")).find((offer) => offer.includes("search"))!;
    const typo = alias.replace("search", "serch");
    const answer = await proposeAs(world.keys.agent, conversation, "openai-chat", {
      role: "assistant",
      tool_calls: [{ id: "call_typo", type: "function", function: { name: typo, arguments: '{"text":"x"}' } }],
    });
    expect(answer.json.results[0]).toMatchObject({ code: "tool.not-available", model: { message: hinted(alias) } });
    let client: Client | null = null;
    try {
      client = await connectMcp(MCP_BASE, world.keys.agent, conversation, routeFetch);
      const failure = await client.callTool({ name: typo, arguments: { text: "x" } }).catch((error: Error) => error);
      expect((failure as Error).message).toBe(`MCP error -32602: unknown tool: ${typo}; did you mean ${alias}?`);
    } finally {
      await client?.close();
    }
    const rows = await db.toolCall.findMany({ where: { conversationId: conversation }, orderBy: { createdAt: "asc" } });
    expect(rows.map((row) => [row.toolName, row.code])).toEqual(Array(2).fill(["(unknown)", "tool.not-available"]));
  });

  it("is told nothing of a tool the conversation was not opened with, nor of one denied since it opened", async () => {
    const narrow = await open(["tickets__create_ticket"]);
    const random = await misspelled(narrow, "tickets__close_everything");
    expect(random).toEqual({
      code: "tool.not-available",
      message: NO_SUCH_TOOL,
      row: ["(unknown)", "tool.not-available"],
    });
    expect(await misspelled(narrow, `tickets__${DOTTED.replace("open", "opne")}`)).toEqual(random);
    expect(await misspelled(narrow, "tickets_search-open_tickets")).toMatchObject({
      code: "tool.unknown",
      message: NO_SUCH_TOOL,
    });

    const server = (await findServer(db, world.tenantId, "tickets"))!;
    await reviewAll(world, server, { create_ticket: "deny" });
    try {
      expect(await misspelled(narrow, "tickets__create_tiket")).toEqual(random);
    } finally {
      await reviewAll(world, server, { create_ticket: "hold" });
    }
  });
});
