import "server-only";
import type { Client, Db } from "../db";

// The agent API's statements: the MCP tasks (mcp/tasks.ts), each a handle on one tool call's row.

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

/** The conversation's task with this id, or null. */
export async function findTask(
  db: Client,
  conversation: { tenantId: string; id: string },
  taskId: string,
): Promise<TaskRow | null> {
  return db.mcpTask.findFirst({
    where: { id: taskId, tenantId: conversation.tenantId, conversationId: conversation.id },
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
  conversation: { tenantId: string; id: string },
  after: { createdAt: Date; id: string } | null,
  take: number,
): Promise<TaskRow[]> {
  return db.mcpTask.findMany({
    where: {
      tenantId: conversation.tenantId,
      conversationId: conversation.id,
      ...(after
        ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }
        : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
    select: TASK_SELECT,
  });
}
