import type { Client, Db } from "../db";
import type { Outcome } from "../outcome";

// The agent API's statements: an agent's reads of its own calls (tool-calls.ts) and the MCP tasks (mcp/tasks.ts),
// each a handle on one tool call's row.

// A task with what its state is read from: its call's outcome and the approval that call waits on.
const TASK_SELECT = {
  id: true,
  createdAt: true,
  toolCallId: true,
  toolCall: {
    select: {
      outcome: true,
      updatedAt: true,
      approvalId: true,
      approval: { select: { status: true, expiresAt: true } },
    },
  },
} as const;

export interface TaskRow {
  id: string;
  createdAt: Date;
  toolCallId: string;
  toolCall: {
    outcome: unknown;
    updatedAt: Date;
    approvalId: string | null;
    approval: { status: string; expiresAt: Date } | null;
  };
}

/** The tasks a caller may see: the conversation's, of calls of the tools it could call itself. */
interface TaskScope {
  tenantId: string;
  id: string;
  tools: string[];
}

/** The conversation's task with this id, or null. */
export async function findTask(db: Client, conversation: TaskScope, taskId: string): Promise<TaskRow | null> {
  return db.mcpTask.findFirst({
    where: {
      id: taskId,
      tenantId: conversation.tenantId,
      conversationId: conversation.id,
      toolCall: { toolName: { in: conversation.tools } },
    },
    select: TASK_SELECT,
  });
}

/** Stores a task for the call unless the call already has one. */
export async function insertTask(
  db: Db,
  task: { id: string; tenantId: string; conversationId: string; toolCallId: string; apiKeyId: string },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "McpTask" ("id", "tenantId", "conversationId", "toolCallId", "apiKeyId")
    VALUES (${task.id}, ${task.tenantId}, ${task.conversationId}, ${task.toolCallId}, ${task.apiKeyId})
    ON CONFLICT ("toolCallId") DO NOTHING`;
}

/** The task of this call in this conversation, or null. */
export async function findCallTask(db: Client, conversationId: string, toolCallId: string): Promise<TaskRow | null> {
  return db.mcpTask.findFirst({ where: { toolCallId, conversationId }, select: TASK_SELECT });
}

/**
 * Up to `take` of the conversation's tasks, newest first (by creation, then id), starting after `after` when
 * given (a page's last task).
 */
export async function findTasksPage(
  db: Client,
  conversation: TaskScope,
  after: { createdAt: Date; id: string } | null,
  take: number,
): Promise<TaskRow[]> {
  return db.mcpTask.findMany({
    where: {
      tenantId: conversation.tenantId,
      conversationId: conversation.id,
      toolCall: { toolName: { in: conversation.tools } },
      ...(after
        ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }
        : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
    select: TASK_SELECT,
  });
}

/** A call as its agent reads it: its stored outcome and its approval request, if any. */
export interface AgentToolCallRow {
  id: string;
  conversationId: string;
  outcome: Outcome;
  approval: { id: string; status: string; expiresAt: Date } | null;
}

/**
 * The call with this id of the tenant, only if the agent's own conversation made it; null otherwise. One statement,
 * its approval joined: an agent waiting on a call reads it on every change.
 */
export async function findAgentToolCallRow(
  db: Db,
  agent: { userId: string; tenantId: string },
  id: string,
): Promise<AgentToolCallRow | null> {
  const [call] = await db.$queryRaw<
    {
      id: string;
      conversationId: string;
      outcome: Outcome;
      approvalId: string | null;
      approvalStatus: string | null;
      approvalExpiresAt: Date | null;
    }[]
  >`
    SELECT c."id", c."conversationId", c."outcome",
           a."id" AS "approvalId", a."status" AS "approvalStatus", a."expiresAt" AS "approvalExpiresAt"
    FROM "ToolCall" c
    JOIN "Conversation" v ON v."id" = c."conversationId" AND v."agentId" = ${agent.userId}
    LEFT JOIN "ApprovalRequest" a ON a."id" = c."approvalId"
    WHERE c."id" = ${id} AND c."tenantId" = ${agent.tenantId}`;
  if (!call) return null;
  const { approvalId, approvalStatus, approvalExpiresAt, ...row } = call;
  return {
    ...row,
    approval: approvalId ? { id: approvalId, status: approvalStatus!, expiresAt: approvalExpiresAt! } : null,
  };
}
