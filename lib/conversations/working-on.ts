import { appendAuditLog } from "../audit/sql";
import { db, transaction } from "../db";
import { countConversationOpen } from "../gateway";
import { planConversation } from "./open";
import {
  customerExists,
  findResumableConversation,
  findWorkingConnections,
  insertConversation,
  lockLiveConnection,
  setWorkingConversation,
  type NewConversation,
  type WorkingConnection,
} from "./sql";

// One connection, many customers (issue 40, decision 022). An OAuth connection (Claude, ChatGPT, VS Code…) carries its
// person's agent identity; the customer it works on is chosen here, by that person, signed in to toolgate. No tool
// call, argument or tool result can choose or change it: the MCP endpoint only reads the choice.

export type { WorkingConnection } from "./sql";

interface Person {
  userId: string;
  tenantId: string;
}

export type SwitchResult =
  | { ok: true; conversationId: string; opened: boolean }
  | {
      ok: false;
      code: "connection.not-found" | "customer.not-found" | "agent.not-authorized" | "rate.limited";
      message: string;
    };

/** The person's live connections, each with the customer it works on. */
export async function workingConnections(person: Person): Promise<WorkingConnection[]> {
  return findWorkingConnections(db, person);
}

const CONNECTION_GONE = {
  ok: false,
  code: "connection.not-found",
  message: "That connection is not yours, or was revoked.",
} as const;

/**
 * Points one of the person's connections at a customer: resumes their conversation about that customer from the
 * last 24 hours, or opens one (counted against the same per-minute limit as any other open). The switch is kept in
 * the sealed audit log with who made it, the connection and the conversations before and after.
 */
export async function workOnCustomer(person: Person, grantId: string, customerId: string): Promise<SwitchResult> {
  const [known] = await findWorkingConnections(db, person, grantId);
  if (!known) return CONNECTION_GONE;
  if (!(await customerExists(db, person.tenantId, customerId)))
    return { ok: false, code: "customer.not-found", message: "No such customer: search again by email." };

  let conversationId = await findResumableConversation(db, person, customerId);
  let fresh: NewConversation | null = null;
  if (conversationId === null) {
    const planned = await planConversation(person, { customer_id: customerId });
    if (!planned.ok)
      return planned.code === "agent.not-authorized"
        ? { ok: false, code: "agent.not-authorized", message: "Only an active agent works on customers." }
        : { ok: false, code: "customer.not-found", message: "No such customer: search again by email." };
    fresh = planned.conversation;
    conversationId = fresh.id;
  }
  const opened = fresh !== null;

  // The connection may have been revoked since it was read: it is read again under its lock before anything is
  // written, so a revoked one gets neither a new conversation nor a pointer, and takes none of the person's opens.
  return transaction(async (tx): Promise<SwitchResult> => {
    const live = await lockLiveConnection(tx, person, grantId);
    if (!live) return CONNECTION_GONE;
    if (fresh) {
      const rate = await countConversationOpen(person, tx);
      if (!rate.ok)
        return {
          ok: false,
          code: "rate.limited",
          message: `You opened too many conversations this minute; try again in ${rate.retryAfterSeconds} s.`,
        };
      await insertConversation(tx, fresh);
    }
    await setWorkingConversation(tx, grantId, conversationId);
    await appendAuditLog(tx, {
      tenantId: person.tenantId,
      actorId: person.userId,
      action: "connection.customer-switched",
      detail: {
        grantId,
        clientId: live.clientId,
        customerId,
        conversationId,
        previousConversationId: live.previousConversationId,
        opened,
      },
    });
    return { ok: true, conversationId, opened };
  });
}
