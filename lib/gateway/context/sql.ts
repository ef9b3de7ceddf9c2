import type { Db } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import { ORDER_FACTS, orderById } from "../../tools/sql";
import type { EarlierEffect, OrderFacts } from "../../tools/types";
import { customerRefunds7d, ruleFactsColumns, type RuleFactsRow } from "../decide/sql";

/** A conversation's budgets and its agent's permission row (null when the agent is gone). */
export interface LockedConversationRow {
  writesMade: number;
  irreversibleCents: number;
  role: string | null;
  canRefund: boolean | null;
  active: boolean | null;
}

/**
 * The statement that locks the conversation's row until the transaction ends and returns its budgets and its agent's
 * permission row (a `LockedConversationRow`, none when the conversation is gone).
 */
export const conversationLock = (conversationId: string) => Prisma.sql`
    SELECT c."writesMade", c."irreversibleCents", u."role"::text AS "role", u."canRefund", u."active"
    FROM "Conversation" c LEFT JOIN "User" u ON u."id" = c."agentId" AND u."tenantId" = c."tenantId"
    WHERE c."id" = ${conversationId} FOR UPDATE OF c`;

export async function lockConversationRow(db: Db, conversationId: string): Promise<LockedConversationRow | null> {
  const [row] = await db.$queryRaw<LockedConversationRow[]>(conversationLock(conversationId));
  return row ?? null;
}

/** Everything the checks of one call read, beside the order: see `findCallFacts`. */
export interface CallFactsRow extends OrderFacts, Partial<RuleFactsRow> {
  stored: { id: string; argsHash: string | null; outcome: unknown } | null;
  recent: (Omit<EarlierEffect, "at"> & { at: string })[] | null;
}

/** What one call's facts statement reads: see `callFactsStatement`. */
export interface CallFactsQuery {
  orderId: string;
  tenantId: string;
  customerId: string;
  agentId: string;
  key: { conversationId: string; toolName: string; callKey: string } | null;
  recent: Prisma.Sql | null;
  rules: { countRefunds: boolean } | null;
}

/**
 * In one statement, the order with this id only when it belongs to this tenant and customer, and beside it what the
 * later stages decide from: the call stored under this call key (stage 8), the order's earlier effects the tool
 * declares (`recent`, a scalar subquery on the order `o`; the duplicate-intent guard), and, when `rules` is given, the
 * facts the policy rules read (counting the agent's refunds today only when `countRefunds`): a read in a tenant
 * without rules computes none of them. No row when the order is not the customer's. Run alone (`findCallFacts`) or
 * sent with a write's BEGIN, after the conversation's lock.
 */
export function callFactsStatement(at: CallFactsQuery): Prisma.Sql {
  const { key } = at;
  return Prisma.sql`
    SELECT ${ORDER_FACTS},
           ${
             key
               ? Prisma.sql`(SELECT json_build_object('id', k."id", 'argsHash', k."argsHash", 'outcome', k."outcome") FROM "ToolCall" k
                  WHERE k."conversationId" = ${key.conversationId} AND k."toolName" = ${key.toolName} AND k."callKey" = ${key.callKey})`
               : Prisma.sql`NULL::json`
           } AS "stored",
           ${at.recent ?? Prisma.sql`NULL::json`} AS "recent"
           ${at.rules ? Prisma.sql`, ${ruleFactsColumns({ ...at, ...at.rules })}` : Prisma.empty}
    FROM ${orderById(at.orderId)} JOIN "Customer" cu ON cu."id" = o."customerId" ${at.rules ? customerRefunds7d(at.tenantId) : Prisma.empty}
    WHERE o."tenantId" = ${at.tenantId} AND o."customerId" = ${at.customerId}`;
}

/** The call's facts (`callFactsStatement`) in a statement of their own; null when the order is not the customer's. */
export async function findCallFacts(db: Db, at: CallFactsQuery): Promise<CallFactsRow | null> {
  const [row] = await db.$queryRaw<CallFactsRow[]>(callFactsStatement(at));
  return row ?? null;
}
