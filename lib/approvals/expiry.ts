import { db } from "../db";
import { expireApproval } from "../gateway/approval";
import { lockConversation } from "../gateway/lock";

/** Closes one request if it is past its expiry, taking locks in the order every writer uses. */
export async function expireIfDue(approvalId: string): Promise<boolean> {
  const request = await db.approvalRequest.findUnique({ where: { id: approvalId }, select: { conversationId: true, status: true, expiresAt: true } });
  if (!request || request.status !== "pending" || request.expiresAt > new Date()) return false;
  return db.$transaction(async (tx) => {
    await lockConversation(tx, { id: request.conversationId });
    return expireApproval(tx, approvalId);
  });
}

/** Every pending request (of one tenant, or of all) past its expiry becomes expired, and so do the calls waiting on it. */
export async function expireDue(tenantId?: string): Promise<number> {
  const due = await db.approvalRequest.findMany({
    where: { ...(tenantId ? { tenantId } : {}), status: "pending", expiresAt: { lte: new Date() } },
    select: { id: true },
    take: 500,
  });
  let expired = 0;
  for (const { id } of due) if (await expireIfDue(id)) expired++;
  return expired;
}
