import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  RELATED_TASK_META_KEY,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { db } from "@/lib/db";
import { conversationFor } from "../../support/api";
import { agentConversation, refundArguments, supervisorOf } from "../../support/calls";
import { ownExternals } from "../../support/externals";
import { createWorld, type World } from "../../support/world";
import { MCP_BASE, routeFetch } from "../../support/mcp-route";

// MCP tasks (protocol 2025-11-25) through the real route handler and the official SDK client: a held call run
// as a task ends when a supervisor decides, a cancelled task withdraws the approval request, and a task is seen
// only through its own conversation. Stateless: every request below builds a fresh server, as any instance would.

const externals = ownExternals();

/** The SDK client, declaring task support, connected to one conversation. */
async function taskClient(key: string, conversationId: string): Promise<Client> {
  const client = new Client(
    { name: "toolgate-task-runtime", version: "1.0.0" },
    { capabilities: { tasks: { list: {}, cancel: {} } } },
  );
  const url = new URL(`/api/mcp?conversation=${encodeURIComponent(conversationId)}`, MCP_BASE);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: routeFetch,
    }),
  );
  return client;
}

/** A refund above the auto limit, asked for as a task: the call is held and the answer is a working task. */
async function heldTask(world: World, client: Client) {
  const created = await client.request(
    {
      method: "tools/call",
      params: { name: "issue_refund", arguments: refundArguments(world.orders.o1004, 8000), task: { ttl: 600_000 } },
    },
    CreateTaskResultSchema,
  );
  const { task } = created;
  expect(task).toMatchObject({
    status: "working",
    statusMessage: expect.stringContaining("supervisor's approval"),
    ttl: null,
    pollInterval: 5000,
  });
  const immediate = JSON.parse(String(created._meta?.["io.modelcontextprotocol/model-immediate-response"])) as {
    status: string;
    call_id: string;
  };
  expect(immediate).toMatchObject({ status: "needs_approval", call_id: expect.stringMatching(/^call_/) });
  const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: immediate.call_id } });
  expect(request.status).toBe("pending");
  return { taskId: task.taskId, callId: immediate.call_id, approvalId: request.id };
}

describe("an MCP client that negotiates tasks", () => {
  it("is offered tasks for tools that can be held, and a held refund's task completes with the call's result once approved", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const client = await taskClient(world.keys.agent, conversation);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    expect(
      Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport ?? "forbidden"])),
    ).toMatchObject({
      issue_refund: "optional",
      get_order: "forbidden",
      get_call_status: "forbidden",
    });

    // The SDK's own task flow: the task is created, polled with tasks/get, and its result fetched when it ends.
    const stream = client.experimental.tasks.callToolStream(
      { name: "issue_refund", arguments: refundArguments(world.orders.o1004, 8000) },
      CallToolResultSchema,
      {
        task: { ttl: 600_000 },
      },
    );
    const seen: string[] = [];
    let result: Record<string, unknown> | undefined;
    for await (const message of stream) {
      if (message.type === "taskCreated") {
        seen.push(`created:${message.task.status}`);
        expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
        const request = await db.approvalRequest.findFirstOrThrow({
          where: { conversationId: conversation, status: "pending" },
        });
        expect((await approveRequest(supervisorOf(world), request.id)).ok).toBe(true);
      } else if (message.type === "taskStatus") seen.push(message.task.status);
      else if (message.type === "result") result = message.result as Record<string, unknown>;
      else throw message.error;
    }
    expect(seen).toEqual(["created:working", "completed"]);
    expect(result).toMatchObject({
      isError: false,
      structuredContent: { status: "ok", call_id: expect.any(String), result: { amount_cents: 8000 } },
    });
    expect((result!._meta as Record<string, unknown>)[RELATED_TASK_META_KEY]).toEqual({
      taskId: expect.stringMatching(/^task_/),
    });
    expect((await externals.stats()).totalsByOrder[world.orders.o1004]).toBe(8000);

    // tasks/result and tasks/list from fresh requests (any instance) give the same, and a completed task cannot be cancelled.
    const { tasks } = await client.experimental.tasks.listTasks();
    expect(tasks).toEqual([expect.objectContaining({ status: "completed", statusMessage: "executed" })]);
    const again = await client.experimental.tasks.getTaskResult(tasks[0].taskId, CallToolResultSchema);
    expect(again.structuredContent).toEqual(result!.structuredContent);
    await expect(client.experimental.tasks.cancelTask(tasks[0].taskId)).rejects.toThrow(
      /-32602.*terminal status 'completed'/,
    );
    await client.close();
  });

  it("tasks/result waits on the push channel and answers a denial with the supervisor's reason; the task fails as the spec says", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const client = await taskClient(world.keys.agent, conversation);
    const { taskId, callId, approvalId } = await heldTask(world, client);
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: "working" });

    const waiting = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const startedAt = Date.now();
    expect((await denyRequest(supervisorOf(world), approvalId, "Refund exceeds what we owe.")).ok).toBe(true);
    const result = await waiting;
    expect(Date.now() - startedAt).toBeLessThan(2000);
    expect(result).toMatchObject({
      isError: true,
      structuredContent: { status: "not_allowed", call_id: callId, reason: "Refund exceeds what we owe." },
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({
      status: "failed",
      statusMessage: "not_allowed: Refund exceeds what we owe.",
    });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
    await client.close();
  });

  it("cancelling a held call's task withdraws the approval request: nothing is refunded and no supervisor can approve it", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const client = await taskClient(world.keys.agent, conversation);
    const { taskId, callId, approvalId } = await heldTask(world, client);

    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({
      taskId,
      status: "cancelled",
      statusMessage: expect.stringContaining("withdrawn"),
    });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "withdrawn",
      resultCode: "approval.withdrawn",
      decidedById: null,
      decidedAt: expect.any(Date),
    });
    expect(await db.approvalRequest.count({ where: { tenantId: world.tenantId, status: "pending" } })).toBe(0);
    const log = await db.decisionLog.findMany({ where: { toolCallId: callId }, orderBy: { id: "asc" } });
    expect(log.map((row) => [row.kind, row.stage, row.code, row.actorId])).toEqual([
      ["pending_approval", "approval", "approval.required", null],
      ["unavailable", "approval", "approval.withdrawn", null],
    ]);
    expect(await approveRequest(supervisorOf(world), approvalId)).toMatchObject({
      ok: false,
      code: "approval.already-decided",
    });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
    expect((await externals.stats()).totalsByOrder[world.orders.o1004] ?? 0).toBe(0);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).refundedCents).toBe(0);

    // The task stays cancelled; its result is the call's (nothing happened), and a second cancel is refused.
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: "cancelled" });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result).toMatchObject({ isError: true, structuredContent: { status: "unavailable", call_id: callId } });
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/-32602.*terminal status 'cancelled'/);
    // The plain status tool says the same to a model that asks.
    const status = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
    expect(status.structuredContent).toMatchObject({
      status: "ok",
      result: { call_id: callId, status: "unavailable" },
    });
    await client.close();
  });

  it("a task is seen and cancelled only through its own conversation: other keys and conversations get 'not found'", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const owner = await taskClient(world.keys.agent, conversation);
    const { taskId, approvalId } = await heldTask(world, owner);

    const strangers = [
      await taskClient(world.keys.agent, await agentConversation(world)),
      await taskClient(
        world.keys.agent2,
        await conversationFor(world.keys.agent2, { customer_id: world.customers.ana }),
      ),
      await taskClient(
        world.keys.otherAgent,
        await conversationFor(world.keys.otherAgent, { customer_id: world.customers.gil }),
      ),
    ];
    for (const stranger of strangers) {
      await expect(stranger.experimental.tasks.getTask(taskId)).rejects.toThrow(/-32602.*Task not found/);
      await expect(stranger.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toThrow(
        /-32602.*Task not found/,
      );
      await expect(stranger.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/-32602.*Task not found/);
      expect((await stranger.experimental.tasks.listTasks()).tasks).toEqual([]);
      await stranger.close();
    }
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    expect((await owner.experimental.tasks.listTasks()).tasks).toEqual([
      expect.objectContaining({ taskId, status: "working" }),
    ]);
    await expect(owner.experimental.tasks.listTasks("bm90LWEtY3Vyc29y")).rejects.toThrow(/-32602.*Invalid cursor/);
    await owner.close();
  });

  it("a call that is not held ends its task at once, a retried call gets the same task, and a read tool refuses to run as a task", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const client = await taskClient(world.keys.agent, conversation);
    const ask = (amount: number) =>
      client.request(
        {
          method: "tools/call",
          params: {
            name: "issue_refund",
            arguments: refundArguments(world.orders.o1001, amount),
            task: {},
            _meta: { "io.toolgate/idempotency-key": `k-${amount}` },
          },
        },
        CreateTaskResultSchema,
      );
    const small = await ask(1500);
    expect(small.task.status).toBe("completed");
    expect(await client.experimental.tasks.getTaskResult(small.task.taskId, CallToolResultSchema)).toMatchObject({
      isError: false,
      structuredContent: { status: "ok", result: { amount_cents: 1500 } },
    });
    expect((await ask(1500)).task.taskId).toBe(small.task.taskId);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1001 } })).refundedCents).toBe(1500);

    const invalid = await ask(0);
    expect(invalid.task).toMatchObject({ status: "failed", statusMessage: "invalid_arguments" });

    await expect(
      client.request(
        { method: "tools/call", params: { name: "get_order", arguments: { order_id: world.orders.o1001 }, task: {} } },
        CreateTaskResultSchema,
      ),
    ).rejects.toThrow(/-32601.*get_order does not run as a task/);
    // Without `task` the same client gets plain results, held calls included, as before.
    const plain = await client.callTool({ name: "issue_refund", arguments: refundArguments(world.orders.o1004, 8000) });
    expect(plain).toMatchObject({ isError: false, structuredContent: { status: "needs_approval" } });
    await client.close();
  });
});
