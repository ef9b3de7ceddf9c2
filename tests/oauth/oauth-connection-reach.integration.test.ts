import { existsSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { closeUpstreams } from "@/lib/upstream/servers/client";
import { conversationFor } from "../support/api";
import { refundArguments } from "../support/calls";
import { agentSession, connect, mcpRequest } from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { createWorld, type World } from "../support/world";
import { FILESYSTEM_SERVER, reviewAll, useLocalServers } from "../upstream/support";

// What an OAuth connection granted less than its conversation holds (a read-only one) can reach through /api/mcp:
// none of the upstream servers' tools, which have no scope of their own and may write anywhere, and neither the
// tasks nor the statuses of calls it could not make itself, though the agent's key or another connection made them.

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());
vi.mock("@/lib/oauth/clients/fetch-document", async () => (await import("../support/cimd-fetcher")).cimdFetcherMock());

let world: World;
let folder: string;
let conversation: string;

beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
  world = await createWorld();
  folder = realpathSync(mkdtempSync(path.join(tmpdir(), "toolgate-reach-")));
  const [server] = await useLocalServers(folder, [
    { tenant: world.tenantId, name: "files", command: process.execPath, args: [FILESYSTEM_SERVER, folder] },
  ]);
  await reviewAll(world, server, { write_file: "allow" });
  conversation = await conversationFor(world.keys.agent, {
    customer_id: world.customers.ana,
    tools: ["get_order", "issue_refund", "files__write_file"],
  });
}, 60_000);
afterAll(async () => {
  await closeUpstreams();
});

const rpc = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

async function listed(token: string): Promise<string[]> {
  const answer = await mcpRequest(conversation, token, rpc(1, "tools/list"));
  return ((await answer.json()) as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name);
}

describe("an OAuth connection granted less than its conversation", () => {
  it("is offered no upstream tool, and calling one writes nothing and sends nothing upstream", async () => {
    signedIn.user = agentSession(world);
    const readOnly = await connect(["orders:read"]);
    expect(await listed(readOnly.access_token)).not.toContain("files__write_file");
    const target = path.join(folder, "from-read-only.txt");
    const answer = await mcpRequest(
      conversation,
      readOnly.access_token,
      rpc(2, "tools/call", { name: "files__write_file", arguments: { path: target, content: "x" } }),
    );
    expect(await answer.json()).toMatchObject({ error: { message: "unknown tool: files__write_file" } });
    expect(existsSync(target)).toBe(false);
    expect(await db.upstreamCall.count({ where: { tenantId: world.tenantId } })).toBe(0);

    // A connection granted everything the conversation holds reaches them, as the agent's own key does.
    const full = await connect(["orders:read", "refunds:write"]);
    expect(await listed(full.access_token)).toContain("files__write_file");
  });

  it("neither sees nor cancels the task of a refund the agent's key proposed", async () => {
    const created = await mcpRequest(
      conversation,
      world.keys.agent,
      rpc(3, "tools/call", {
        name: "issue_refund",
        arguments: refundArguments(world.orders.o1004, 8000),
        task: { ttl: 600_000 },
      }),
    );
    const { taskId } = ((await created.json()) as { result: { task: { taskId: string } } }).result.task;
    const request = await db.approvalRequest.findFirstOrThrow({ where: { tenantId: world.tenantId } });
    expect(request.status).toBe("pending");

    signedIn.user = agentSession(world);
    const readOnly = await connect(["orders:read"]);
    const ask = async (method: string, params: Record<string, unknown> = {}) =>
      (await (await mcpRequest(conversation, readOnly.access_token, rpc(4, method, params))).json()) as {
        result?: { tasks?: unknown[] };
        error?: { message: string };
      };
    expect((await ask("tasks/list")).result?.tasks).toEqual([]);
    expect((await ask("tasks/get", { taskId })).error?.message).toMatch(/Task not found/);
    expect((await ask("tasks/cancel", { taskId })).error?.message).toMatch(/Task not found/);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: request.id } })).status).toBe("pending");

    // The key that proposed it still sees it.
    const own = (await (await mcpRequest(conversation, world.keys.agent, rpc(5, "tasks/list"))).json()) as {
      result: { tasks: { taskId: string }[] };
    };
    expect(own.result.tasks.map((task) => task.taskId)).toEqual([taskId]);
  });

  it("reads back with get_call_status none of the refund calls the agent's key made, as with their tasks", async () => {
    const held = await mcpRequest(
      conversation,
      world.keys.agent,
      rpc(6, "tools/call", { name: "issue_refund", arguments: refundArguments(world.orders.o1004, 9000) }),
    );
    const callId = ((await held.json()) as { result: { structuredContent: { call_id: string } } }).result
      .structuredContent.call_id;
    const refundsBefore = await db.refund.count({ where: { orderId: world.orders.o1004 } });

    signedIn.user = agentSession(world);
    const readOnly = await connect(["orders:read"]);
    const status = (token: string) =>
      mcpRequest(
        conversation,
        token,
        rpc(7, "tools/call", { name: "get_call_status", arguments: { call_id: callId } }),
      );
    const read = (await (await status(readOnly.access_token)).json()) as {
      result: { isError: boolean; structuredContent: Record<string, unknown> };
    };
    expect(read.result.isError).toBe(true);
    expect(read.result.structuredContent).toMatchObject({ status: "not_found" });
    expect(JSON.stringify(read)).not.toContain("needs_approval");
    // The read is logged as a miss; the refund is untouched, still held.
    const readCall = await db.toolCall.findUniqueOrThrow({
      where: { id: read.result.structuredContent.call_id as string },
    });
    expect(readCall).toMatchObject({ toolName: "get_call_status", code: "call.not-found" });
    expect((await db.toolCall.findUniqueOrThrow({ where: { id: callId } })).code).toBe("approval.required");
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(refundsBefore);

    // The key that proposed it, and a connection granted the refund scope, still read it.
    for (const token of [world.keys.agent, (await connect(["orders:read", "refunds:write"])).access_token]) {
      const own = (await (await status(token)).json()) as { result: { structuredContent: Record<string, unknown> } };
      expect(own.result.structuredContent).toMatchObject({ status: "ok", result: { status: "needs_approval" } });
    }
  });
});
