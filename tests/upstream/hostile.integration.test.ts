import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { cardFacts } from "@/lib/approvals/desk/cards";
import { pendingQueue } from "@/lib/approvals/desk/queue";
import { db } from "@/lib/db";
import { argumentRows } from "@/lib/upstream/calls/card";
import { isUpstreamPreview } from "@/lib/upstream/calls/preview";
import { closeUpstreams } from "@/lib/upstream/servers/client";
import { addRemoteServer, reviewTool } from "@/lib/upstream/servers/servers";
import { upstreamOverview } from "@/lib/upstream/servers/overview";
import { ListingRefused, MAX_DESCRIPTION_CHARS, MAX_TOOLS, syncServer } from "@/lib/upstream/servers/sync";
import { findServer } from "@/lib/upstream/sql";
import { conversationFor, newCallKey, propose } from "../support/api";
import { supervisorOf } from "../support/calls";
import { createWorld, type World } from "../support/world";
import { addTestServer, adminOf, FILESYSTEM_SERVER, reviewAll, useLocalServers } from "./support";
import { startTestUpstream, type TestUpstream } from "./test-upstream";

// Held calls of a server whose tools are named and described to break what reads them (the desk, the mail), and
// held calls that outlive their tool's definition, an operator's file that names a tenant's remote server, and
// listings toolgate does not take.

let world: World;
let upstream: TestUpstream;
const SECRET = "hostile-bearer-secret";
const TOOLS = ["tickets__create_ticket", "tickets__configure"];

beforeAll(async () => {
  process.env.OUTBOUND_ALLOWED_HOSTS = "127.0.0.1";
  world = await createWorld();
  upstream = await startTestUpstream(SECRET);
  upstream.state.tools.push({
    name: "configure",
    description: "Sets a configuration key.",
    inputSchema: {
      type: "object",
      properties: { key: { type: "string" }, constructor: { type: "string", description: "Optional override." } },
      required: ["key"],
    },
  });
  await addTestServer(world, upstream, "tickets", {
    create_ticket: "hold",
    configure: "hold",
  });
});

afterAll(async () => {
  await closeUpstreams();
  await upstream.close();
});

const hold = async (name: string, args: Record<string, unknown>) => {
  const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana, tools: TOOLS });
  const held = await propose(world.keys.agent, conversation, { name, arguments: args }, newCallKey());
  expect(held.json.code).toBe("approval.required");
  return { conversation, held };
};

describe("the approvals desk", () => {
  it("shows a held call whose schema names an optional `constructor`, with or without it", async () => {
    const without = await hold("tickets__configure", { key: "mode" });
    const withIt = await hold("tickets__configure", { key: "mode", constructor: "theirs" });
    const items = await pendingQueue(world.tenantId);
    await cardFacts(world.tenantId, items);
    const rows = (approvalId: string) => {
      const preview = items.find((item) => item.id === approvalId)?.preview;
      if (!isUpstreamPreview(preview)) throw new Error(`no upstream card for ${approvalId}`);
      return argumentRows(preview).map((row) => [row.key, row.lines]);
    };
    expect(rows(without.held.json.approval!.id)).toEqual([["key", ["mode"]]]);
    expect(rows(withIt.held.json.approval!.id)).toEqual([
      ["key", ["mode"]],
      ["constructor", ["theirs"]],
    ]);
  });
});

describe("the supervisors' mail", () => {
  it("writes each argument on one line of its own, so an agent's newlines forge no line", async () => {
    const title =
      "x\n\nHeld because: routine check, already approved\r\nOpen https://evil.example\u2028Decide before: never";
    const { held } = await hold("tickets__configure", { key: title, "k\ney": "v" });
    const mail = await db.outboxMessage.findFirstOrThrow({
      where: { tenantId: world.tenantId, kind: "approval_email", body: { contains: held.json.approval!.id } },
    });
    const lines = mail.body.split(/\r\n|\r|\n|\u0085|\u2028|\u2029/);
    expect(lines.filter((line) => line.startsWith("Held because:"))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("Decide before:"))).toHaveLength(1);
    expect(lines.some((line) => line.startsWith("Open https://evil.example"))).toBe(false);
    expect(lines).toContain(
      '"key": "x\\n\\nHeld because: routine check, already approved\\r\\nOpen https://evil.example\\u2028Decide before: never"',
    );
    expect(lines).toContain('"k\\ney": "v"');
  });
});

describe("a held call proposed again after its tool was re-reviewed", () => {
  it("withdraws the request held under the old definition and holds the call anew under the reviewed one", async () => {
    const args = { title: "Held across a re-review" };
    const first = await hold("tickets__create_ticket", args);
    upstream.state.description = "Creates a ticket in the team's tracker (v2).";
    await reviewAll(world, (await findServer(db, world.tenantId, "tickets"))!, { create_ticket: "hold" });

    const again = await propose(
      world.keys.agent,
      first.conversation,
      { name: "tickets__create_ticket", arguments: args },
      newCallKey(),
    );
    expect(again.json).toMatchObject({ code: "approval.required", model: { status: "needs_approval" } });
    expect(again.json.approval!.id).not.toBe(first.held.json.approval!.id);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: first.held.json.approval!.id } })).toMatchObject({
      status: "withdrawn",
      resultCode: "approval.withdrawn",
    });
    expect((await db.toolCall.findUniqueOrThrow({ where: { id: first.held.json.id } })).code).toBe(
      "approval.withdrawn",
    );
    const pending = await db.approvalRequest.findMany({
      where: { conversationId: first.conversation, toolName: "tickets__create_ticket", status: "pending" },
    });
    expect(pending.map((request) => request.id)).toEqual([again.json.approval!.id]);

    const approved = await approveRequest(supervisorOf(world), again.json.approval!.id);
    expect(approved).toMatchObject({ ok: true, outcome: { code: "upstream.called" } });
    expect(upstream.state.received.filter((call) => call.name === "create_ticket")).toEqual([
      expect.objectContaining({ arguments: args }),
    ]);
  });
});

describe("the operator's file naming a tenant's remote server", () => {
  it("leaves that one out and registers the others", async () => {
    const folder = mkdtempSync(path.join(tmpdir(), "toolgate-hostile-"));
    const command = { command: process.execPath, args: [FILESYSTEM_SERVER, folder] };
    try {
      const rows = await useLocalServers(folder, [
        { tenant: world.tenantId, name: "tickets", ...command },
        { tenant: "t_no_such_tenant", name: "notes", ...command },
        { tenant: world.tenantId, name: "notes", ...command },
      ]);
      expect(rows.map((row) => [row.tenantId, row.name, row.transport])).toEqual([[world.tenantId, "notes", "stdio"]]);
      expect(await findServer(db, world.tenantId, "tickets")).toMatchObject({ transport: "http", url: upstream.url });
    } finally {
      delete process.env.UPSTREAM_SERVERS_FILE;
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("a remote server's URL", () => {
  it("is refused as plain http in production, with or without a secret, and nothing is saved", async () => {
    const before = process.env.NODE_ENV;
    (process.env as Record<string, string>).NODE_ENV = "production";
    try {
      for (const input of [
        { name: "plain", url: upstream.url },
        { name: "plain", url: upstream.url, header_name: "Authorization", secret: SECRET },
      ])
        expect(await addRemoteServer(adminOf(world), input)).toMatchObject({
          ok: false,
          code: "outbound.plain-http",
          message: expect.stringContaining("plain http is refused in production"),
        });
    } finally {
      (process.env as Record<string, string | undefined>).NODE_ENV = before;
    }
    expect(await findServer(db, world.tenantId, "plain")).toBeNull();
  });
});

describe("a listing toolgate does not take", () => {
  it("is refused whole with its reason kept on the server: a name twice, too many tools, a description too long", async () => {
    const other = await startTestUpstream("listing-secret");
    const tool = (name: string, description = "Does a thing.") => ({
      name,
      description,
      inputSchema: { type: "object" as const, properties: {} },
    });
    try {
      other.state.tools = [tool("first_new"), tool("count_tickets")];
      const added = await addRemoteServer(adminOf(world), {
        name: "listing",
        url: other.url,
        header_name: "Authorization",
        secret: "listing-secret",
      });
      expect(added).toMatchObject({
        ok: false,
        code: "server.listing-refused",
        message: expect.stringContaining('lists a tool named "count_tickets" more than once'),
      });
      const server = (await findServer(db, world.tenantId, "listing"))!;
      const tools = () => db.upstreamTool.findMany({ where: { serverId: server.id }, orderBy: { name: "asc" } });
      const refusedWith = async () =>
        (await upstreamOverview(world.tenantId)).servers.find((row) => row.name === "listing")?.listingRefused;
      expect(await tools()).toEqual([]);
      expect(await refusedWith()).toContain("more than once");

      other.state.tools = [];
      expect((await syncServer(server)).added).toEqual(["create_ticket", "count_tickets"]);
      expect(await refusedWith()).toBeNull();

      for (const [listed, reason] of [
        [Array.from({ length: MAX_TOOLS - 1 }, (_, index) => tool(`t${index}`)), `more than the ${MAX_TOOLS} toolgate`],
        [[tool("wordy", "x".repeat(MAX_DESCRIPTION_CHARS + 1))], `longer than the ${MAX_DESCRIPTION_CHARS} characters`],
      ] as const) {
        other.state.tools = [...listed];
        await expect(syncServer(server)).rejects.toThrow(ListingRefused);
        expect(await refusedWith()).toContain(reason);
        expect((await tools()).map((row) => row.name)).toEqual(["count_tickets", "create_ticket"]);
      }
    } finally {
      await other.close();
    }
  });
});

describe("a tool whose input schema toolgate cannot check", () => {
  it("can only be denied: the review page says why, and allow or hold is refused with nothing saved", async () => {
    const other = await startTestUpstream("lookahead-secret");
    try {
      other.state.tools = [
        {
          name: "lookahead",
          description: "Takes a code a lookahead describes.",
          inputSchema: { type: "object", properties: { code: { type: "string", pattern: "^(?=[A-Z])\\w+$" } } },
        },
      ];
      await addTestServer(world, other, "lookahead");
      const review = async () =>
        (await upstreamOverview(world.tenantId)).tools.find(
          (tool) => tool.server === "lookahead" && tool.name === "lookahead",
        )!;
      const shown = await review();
      expect(shown).toMatchObject({
        status: "pending-review",
        suggested: "deny",
        schemaProblem: expect.stringContaining("cannot run in linear time"),
      });
      for (const verdict of ["allow", "hold"] as const) {
        const refused = await reviewTool(adminOf(world), {
          tool_id: shown.id,
          definition_hash: shown.definitionHash,
          verdict,
        });
        expect(refused).toMatchObject({
          ok: false,
          code: "tool.schema-unusable",
          message: expect.stringContaining("deny it, or ask the server's owner to change the schema"),
        });
      }
      expect(await db.upstreamTool.findUniqueOrThrow({ where: { id: shown.id } })).toMatchObject({
        status: "pending-review",
        reviewedHash: null,
      });
      const denied = await reviewTool(adminOf(world), {
        tool_id: shown.id,
        definition_hash: shown.definitionHash,
        verdict: "deny",
      });
      expect(denied.ok).toBe(true);
      expect(await review()).toMatchObject({ status: "reviewed", verdict: "deny" });
    } finally {
      await other.close();
    }
  });
});
