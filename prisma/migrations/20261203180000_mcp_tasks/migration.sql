-- MCP tasks (protocol revision 2025-11-25): a client that augments tools/call with a task gets a task id for the
-- call instead of its result. The task is a handle on the ToolCall row, so its state (working while held, then
-- completed, failed or cancelled) is read from the call; this table only records which calls were asked for as
-- tasks, by which key, under which conversation (tasks/list and every task lookup are scoped to it). One task per
-- call: a retried task-augmented call that replays the same call gets the same task.

-- CreateTable
CREATE TABLE "McpTask" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "toolCallId" TEXT NOT NULL,
    "apiKeyId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "McpTask_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "McpTask_toolCallId_key" ON "McpTask"("toolCallId");

-- CreateIndex
CREATE INDEX "McpTask_conversationId_createdAt_idx" ON "McpTask"("conversationId", "createdAt");

-- AddForeignKey
ALTER TABLE "McpTask" ADD CONSTRAINT "McpTask_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "Conversation"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "McpTask" ADD CONSTRAINT "McpTask_toolCallId_fkey" FOREIGN KEY ("toolCallId") REFERENCES "ToolCall"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A cancelled task withdraws the approval request its call waits on: a request can now also end 'withdrawn'.
ALTER TABLE "ApprovalRequest" DROP CONSTRAINT "ApprovalRequest_status_check";
ALTER TABLE "ApprovalRequest" ADD CONSTRAINT "ApprovalRequest_status_check" CHECK ("status" IN ('pending', 'approved', 'denied', 'expired', 'failed', 'withdrawn'));
