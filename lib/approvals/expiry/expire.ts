import { db, transaction } from "../../db";
import { expireApproval, lockConversation } from "../../gateway";
import { updateInChat } from "../notify/chat";
import { findDueRequests, findExpiry } from "./sql";

/** Closes one request if it is past its expiry (its chat notices say so), taking locks in the order every writer uses. */
async function expireIfDue(approvalId: string): Promise<boolean> {
  const request = await findExpiry(db, approvalId);
  if (!request || request.status !== "pending" || request.expiresAt > new Date()) return false;
  return transaction(async (tx) => {
    await lockConversation(tx, { id: request.conversationId });
    if (!(await expireApproval(tx, approvalId))) return false;
    await updateInChat(tx, approvalId, { kind: "expired" });
    return true;
  });
}

/** Every pending request (of one tenant, or of all) past its expiry becomes expired, and so do the calls waiting on it. */
export async function expireDue(tenantId?: string): Promise<number> {
  const due = await findDueRequests(db, tenantId);
  let expired = 0;
  for (const { id } of due) if (await expireIfDue(id)) expired++;
  return expired;
}
