import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type CreateTaskResult,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import { updateInChat } from "../../../approvals/notify/chat";
import type { AuthenticatedAgent } from "../../../auth/keys/api-keys";
import { keyAuthenticates } from "../../../auth/keys/sql";
import { db, transaction } from "../../../db";
import { type ConversationFacts, lockConversation, withdrawApproval } from "../../../gateway";
import { modelProjection, outcomeAsRead, type Outcome } from "../../../outcome";
import { newId } from "../../../ids";
import { callableTools } from "../../../tools/registry";
import type { Credential } from "../server";
import { isWellFormedId } from "../../../security/input";
import { onDrain, shuttingDown } from "../../../instance/shutdown";
import { MAX_WAIT_SECONDS, waitForAgentToolCall } from "../../tool-calls";
import { findCallTask, findTask, findTasksPage, insertTask, type TaskRow } from "../../sql";

// MCP tasks (protocol revision 2025-11-25, the SDK's experimental task API) for a stateless server. A client that
// augments tools/call with `task` gets a task instead of the result; the task is a handle on the call's row, so
// every app instance answers tasks/get, tasks/result, tasks/list and tasks/cancel from PostgreSQL alone: the
// McpTask row says which call and conversation, the call's outcome says the state. The SDK's own TaskStore path
// is not used: its tasks/result polls a store on a timer and its tasks/cancel only marks a status, while here
// tasks/result waits on the push channel (lib/live/index.ts) and tasks/cancel withdraws the approval request.

/** The server's `tasks` capability: tools/call may be augmented; tasks can be listed and cancelled. */
export const TASK_CAPABILITIES = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** The polling interval suggested to clients: approvals take minutes, and tasks/result is told at once. */
export const TASK_POLL_INTERVAL_MS = 5000;
const LIST_PAGE = 50;
const MODEL_IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response";

export interface TaskBinding {
  agent: AuthenticatedAgent;
  conversation: ConversationFacts;
  /** The HTTP request's signal: a client that hangs up stops its tasks/result wait. */
  signal?: AbortSignal;
}

type ToolResultOf = (callId: string, outcome: Outcome, replayed: boolean) => CallToolResult;

const protocolError = (code: number, message: string) => Object.assign(new Error(message), { code });
const notFound = () => protocolError(ErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
/** The call's outcome; one whose approval lapsed reads as `approval.expired`, which the expiry job records for it. */
export function outcomeOf(row: TaskRow): Outcome {
  const approval = row.toolCall.approval;
  const lapsed = Boolean(row.toolCall.approvalId) && approval?.status === "pending" && approval.expiresAt <= new Date();
  return outcomeAsRead(row.toolCall.outcome as Outcome, lapsed);
}

/** Working while a supervisor or the payment provider has yet to answer; then the call's end, as the spec maps it. */
function stateOf(o: Outcome): Pick<Task, "status" | "statusMessage"> {
  if (o.kind === "pending_approval")
    return {
      status: "working",
      statusMessage: `held for a supervisor's approval until ${o.approval?.expires_at ?? "it expires"}`,
    };
  if (o.code === "refund.outcome-unknown")
    return { status: "working", statusMessage: "approved; waiting for the payment provider's answer" };
  if (o.code === "approval.withdrawn")
    return {
      status: "cancelled",
      statusMessage: "the approval request was withdrawn before anyone decided; nothing was executed",
    };
  // A tool result with isError makes the task failed (spec 2025-11-25, Task Execution Errors); the message is the
  // model projection, never an internal reason.
  const shown = modelProjection(o);
  if (o.kind === "executed") return { status: "completed", statusMessage: "executed" };
  return { status: "failed", statusMessage: shown.reason ? `${shown.status}: ${shown.reason}` : shown.status };
}

const terminal = (status: Task["status"]) => status === "completed" || status === "failed" || status === "cancelled";

/** A task's id, times and state as both task protocols name them; last updated when its call last changed. */
export function taskState<S extends { status: string }>(row: TaskRow, stateOf: (outcome: Outcome) => S) {
  const updated = row.toolCall.updatedAt > row.createdAt ? row.toolCall.updatedAt : row.createdAt;
  return {
    taskId: row.id,
    ...stateOf(outcomeOf(row)),
    createdAt: row.createdAt.toISOString(),
    lastUpdatedAt: updated.toISOString(),
  };
}

function taskOf(row: TaskRow): Task {
  return {
    ...taskState(row, stateOf),
    // A task lives as long as its call's record, which is kept: no requested ttl shortens it.
    ttl: null,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/**
 * Whose tasks the binding sees: the conversation's, of the tools it could call itself, so a connection granted less
 * (a read-only one) neither reads nor cancels the refund another key or connection of the agent proposed.
 */
function taskScope(bound: TaskBinding) {
  return { tenantId: bound.agent.tenantId, id: bound.conversation.id, tools: callableTools(bound.conversation) };
}

/** One task of the bound conversation that the binding may see, or null. */
export async function readTask(bound: TaskBinding, taskId: string): Promise<TaskRow | null> {
  if (!isWellFormedId(taskId)) return null;
  return findTask(db, taskScope(bound), taskId);
}

/** The call's task, stored before it is answered: one per call, so a replayed call gets its task again. */
export async function insertCallTask(bound: TaskBinding, callId: string): Promise<TaskRow | null> {
  await insertTask(db, {
    id: newId("task"),
    tenantId: bound.agent.tenantId,
    conversationId: bound.conversation.id,
    toolCallId: callId,
    apiKeyId: bound.agent.apiKeyId,
  });
  return findCallTask(db, bound.conversation.id, callId);
}

/** The task for a call made by a task-augmented tools/call (revision 2025-11-25). */
export async function createCallTask(
  bound: TaskBinding,
  callId: string,
  immediate: CallToolResult,
): Promise<CreateTaskResult> {
  const row = await insertCallTask(bound, callId);
  if (!row) throw protocolError(ErrorCode.InternalError, "the task could not be created");
  // What a host may hand the model at once (spec 2025-11-25, Creating Tasks): the same text as a plain call's.
  const text = immediate.content.find((part) => part.type === "text")?.text;
  return { task: taskOf(row), ...(text ? { _meta: { [MODEL_IMMEDIATE_RESPONSE]: text } } : {}) };
}

/**
 * Blocks until the task is terminal (the spec's tasks/result), woken by the conversation's NOTIFY. A key or connection
 * revoked meanwhile marks `credential` and throws, and endpoint.ts answers the whole request as a revoked credential.
 */
async function waitForTerminal(bound: TaskBinding, taskId: string, credential: Credential): Promise<TaskRow> {
  const draining = new AbortController();
  const stopDraining = onDrain(() => draining.abort());
  const signal = bound.signal ? AbortSignal.any([bound.signal, draining.signal]) : draining.signal;
  try {
    for (;;) {
      const row = await readTask(bound, taskId);
      if (!row) throw notFound();
      if (terminal(stateOf(outcomeOf(row)).status)) {
        // The wait outlives the request's authentication: a connection revoked (or an agent deactivated) meanwhile
        // gets no outcome from it, as its next request would get none.
        if (!(await keyAuthenticates(db, bound.agent.apiKeyId))) {
          credential.revoked = true;
          throw protocolError(ErrorCode.InvalidRequest, "this connection or key was revoked while it waited");
        }
        return row;
      }
      if (signal.aborted || shuttingDown()) {
        throw protocolError(
          ErrorCode.InternalError,
          "the wait for this task ended before it did (the request closed or the instance is stopping); ask again",
        );
      }
      await waitForAgentToolCall(bound.agent, row.toolCallId, MAX_WAIT_SECONDS, signal);
    }
  } finally {
    stopDraining();
  }
}

function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const createdAt = new Date(at ?? "");
  if (rest.length > 0 || !id || !isWellFormedId(id) || Number.isNaN(createdAt.getTime())) {
    throw protocolError(ErrorCode.InvalidParams, "Invalid cursor");
  }
  return { createdAt, id };
}

/**
 * Withdraws the approval request a task's call waits on, while it is still pending: false when the call is past
 * withdrawal (decided, expired, or with the payment provider). A decision that wins the race stands; the caller
 * reads the task again to see which.
 */
export async function withdrawTaskCall(bound: TaskBinding, row: TaskRow): Promise<boolean> {
  const startedAt = performance.now();
  const approvalId = row.toolCall.approvalId;
  if (outcomeOf(row).kind !== "pending_approval" || approvalId === null) return false;
  await transaction(async (tx) => {
    // The order every writer takes its locks in: the conversation first, so a supervisor's decision and a
    // withdrawal of the same request are serialized and exactly one of them closes it.
    await lockConversation(tx, { id: bound.conversation.id });
    if (await withdrawApproval(tx, approvalId, performance.now() - startedAt))
      await updateInChat(tx, approvalId, { kind: "withdrawn" });
  });
  return true;
}

/** Withdraws the approval request the task's call waits on; only while it is still pending. */
async function cancelTask(bound: TaskBinding, taskId: string): Promise<Task> {
  const row = await readTask(bound, taskId);
  if (!row) throw notFound();
  const before = taskOf(row);
  if (terminal(before.status))
    throw protocolError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${before.status}'`);
  if (!(await withdrawTaskCall(bound, row))) {
    throw protocolError(
      ErrorCode.InvalidParams,
      "Cannot cancel task: the call was approved and its refund went to the payment provider; it can no longer be withdrawn",
    );
  }
  const after = await readTask(bound, taskId);
  if (!after) throw notFound();
  const task = taskOf(after);
  // Decided or expired meanwhile: the decision stands, and the task is already terminal.
  if (task.status !== "cancelled")
    throw protocolError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${task.status}'`);
  return task;
}

/** tasks/get, tasks/result, tasks/list and tasks/cancel for the bound conversation's tasks only. */
export function registerTaskHandlers(
  server: Server,
  bound: TaskBinding,
  credential: Credential,
  toolResult: ToolResultOf,
): void {
  server.setRequestHandler(GetTaskRequestSchema, async (request) => {
    const row = await readTask(bound, request.params.taskId);
    if (!row) throw notFound();
    return taskOf(row);
  });

  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request) => {
    const row = await waitForTerminal(bound, request.params.taskId, credential);
    const result = toolResult(row.toolCallId, outcomeOf(row), false);
    return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId: row.id } } };
  });

  server.setRequestHandler(ListTasksRequestSchema, async (request) => {
    const cursor = request.params?.cursor;
    const after = cursor === undefined ? null : decodeCursor(cursor);
    const rows = await findTasksPage(db, taskScope(bound), after, LIST_PAGE + 1);
    const page = rows.slice(0, LIST_PAGE);
    return {
      tasks: page.map(taskOf),
      ...(rows.length > LIST_PAGE ? { nextCursor: encodeCursor(page[page.length - 1]) } : {}),
    };
  });

  server.setRequestHandler(CancelTaskRequestSchema, async (request) => cancelTask(bound, request.params.taskId));
}
