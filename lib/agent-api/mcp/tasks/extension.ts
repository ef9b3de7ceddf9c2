import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Outcome } from "../../../outcome";
import type { TaskRow } from "../../sql";
import {
  insertCallTask,
  outcomeOf,
  readTask,
  taskState,
  TASK_POLL_INTERVAL_MS,
  withdrawTaskCall,
  type TaskBinding,
} from "./tasks";

// The tasks extension of protocol revision 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663). The server
// decides per call: a write that is held for a supervisor answers with a task instead of blocking; everything
// else answers at once. The task is the same McpTask row the 2025-11-25 tasks use (tasks.ts), so any instance
// answers tasks/get and tasks/cancel. Unlike 2025-11-25, a tool result with isError is a completed task (its
// result says why); `failed` is kept for protocol errors, which a stored call never has. No task here ever asks
// the client for input, so tasks/update only acknowledges.

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

type ToolResultOf = (callId: string, outcome: Outcome, replayed: boolean) => object;

/** The part of a handler's context this module reads: the request's own `_meta` envelope. */
export interface EnvelopeContext {
  mcpReq: { envelope?: object };
}

/** Whether this request's client capabilities declare the tasks extension (2026-07-28 has no session to remember it). */
export function declaresTasks(ctx: EnvelopeContext): boolean {
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES];
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

function requireTasks(ctx: EnvelopeContext): void {
  if (!declaresTasks(ctx)) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `declare the ${TASKS_EXTENSION} extension in this request's client capabilities to use tasks`,
    );
  }
}

const notFound = () => new ProtocolError(ProtocolErrorCode.InvalidParams, "Failed to retrieve task: Task not found");

function stateOf(outcome: Outcome) {
  if (outcome.kind === "pending_approval")
    return {
      status: "working" as const,
      statusMessage: `held for a supervisor's approval until ${outcome.approval?.expires_at ?? "it expires"}`,
    };
  if (outcome.code === "refund.outcome-unknown")
    return { status: "working" as const, statusMessage: "approved; waiting for the payment provider's answer" };
  if (outcome.code === "approval.withdrawn")
    return {
      status: "cancelled" as const,
      statusMessage: "the approval request was withdrawn before anyone decided; nothing was executed",
    };
  return {
    status: "completed" as const,
    statusMessage: outcome.kind === "executed" ? "executed" : "ended without executing; the result says why",
  };
}

function taskOf(row: TaskRow) {
  return {
    ...taskState(row, stateOf),
    // A task lives as long as its call's record, which is kept.
    ttlMs: null,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
}

/** What tasks/get answers: the task, and for a completed one the tool result the call ended with. */
function detailedTask(row: TaskRow, toolResult: ToolResultOf) {
  const task = taskOf(row);
  return task.status === "completed" ? { ...task, result: toolResult(row.toolCallId, outcomeOf(row), false) } : task;
}

/** A held call's answer to a client that declared the extension: its task, stored before it is returned. */
export async function createHeldCallTask(bound: TaskBinding, callId: string) {
  const row = await insertCallTask(bound, callId);
  if (!row) throw new ProtocolError(ProtocolErrorCode.InternalError, "the task could not be created");
  return { resultType: "task" as const, ...taskOf(row) };
}

// tasks/update's `inputResponses` is lifted off the params by the SDK (ctx.mcpReq.inputResponses), as for any
// multi round-trip retry; no task here asks for input, so it is not read.
const TaskParams = z.object({ taskId: z.string().max(64) });
const Loose = z.looseObject({});

/** tasks/get, tasks/update and tasks/cancel for the bound conversation's tasks, to clients that declared them. */
export function registerTasksExtension(server: Server, bound: TaskBinding, toolResult: ToolResultOf): void {
  const found = async (taskId: string) => {
    const row = await readTask(bound, taskId);
    if (!row) throw notFound();
    return row;
  };
  server.setRequestHandler("tasks/get", { params: TaskParams, result: Loose }, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    return detailedTask(await found(taskId), toolResult);
  });
  server.setRequestHandler("tasks/update", { params: TaskParams, result: Loose }, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    await found(taskId);
    return {};
  });
  // Cooperative, as the extension has it: acknowledged always; a call still held is withdrawn, an ended one stays.
  server.setRequestHandler("tasks/cancel", { params: TaskParams, result: Loose }, async ({ taskId }, ctx) => {
    requireTasks(ctx);
    await withdrawTaskCall(bound, await found(taskId));
    return {};
  });
}
