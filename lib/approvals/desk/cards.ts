import { db } from "../../db";
import { amountCentsOf } from "../../money";
import { findTool, TOOL_NAMES } from "../../tools/registry";
import { holdableToolNames } from "../../upstream/calls/exposure";
import { findDeskPolicy, type DeskPolicy } from "../sql";
import type { QueueItem } from "./queue";
import {
  findAgents,
  findCardOrders,
  findCardRefunds,
  findCardRequests,
  findPendingOnOrders,
  findTenantPeople,
} from "./sql";

export type { DeskPolicy } from "../sql";

/** The facts a supervisor needs beside a request to decide it in seconds, read now (not as the checks saw them). */
export interface CardFacts {
  customer: { id: string; email: string } | null;
  requester: { name: string; email: string } | null;
  orderNow: {
    status: string;
    totalCents: number;
    refundedCents: number;
    currency: string;
    version: number;
    refundPending: boolean;
    fraudHold: boolean;
  } | null;
  refunds: { id: string; amountCents: number; currency: string; status: string; createdAt: string }[];
  /**
   * Other pending requests on the same order (the oldest few), so they are read and decided together; each with who
   * asked and when, since two may read alike.
   */
  siblings: { id: string; impactCents: number; toolName: string; requester: string | null; createdAt: string }[];
  /** How many more are pending on the same order beyond `siblings` (at least this many when capped). */
  moreSiblings: number;
  moreSiblingsCapped: boolean;
  /** The first of two approvals, with the amount it approved (a second approval approves that amount). */
  firstApprover: { name: string; email: string; at: string; cents: number | null } | null;
}

/** How many other requests on the same order a card names; it counts the rest, up to "over 1,000". */
const SIBLINGS_SHOWN = 5;
const SIBLINGS_COUNTED = 1000;
// Counting stops here: past it the card says "over 1,000 more" rather than walk every request waiting on the order.
const COUNT_UP_TO = SIBLINGS_COUNTED + SIBLINGS_SHOWN + 2;

/** The other requests on `item`'s order that its card names, and how many more there are. */
function siblingsOf(
  item: QueueItem,
  pending: Awaited<ReturnType<typeof findPendingOnOrders>>,
  people: Map<string, { name: string }>,
): Pick<CardFacts, "siblings" | "moreSiblings" | "moreSiblingsCapped"> {
  const onOrder = pending.filter((other) => other.orderId === item.orderId);
  const shown = onOrder
    .filter((other) => other.id !== item.id)
    .slice(0, SIBLINGS_SHOWN)
    .map(({ id, impactCents, toolName, requestedById, createdAt }) => ({
      id,
      impactCents,
      toolName,
      requester: people.get(requestedById)?.name ?? null,
      createdAt: createdAt.toISOString(),
    }));
  // The order's count includes this request while it is pending.
  const counted = onOrder[0]?.onOrder ?? 0;
  const others = counted - 1;
  return {
    siblings: shown,
    moreSiblings: counted >= COUNT_UP_TO ? SIBLINGS_COUNTED : Math.max(0, others - shown.length),
    moreSiblingsCapped: counted >= COUNT_UP_TO,
  };
}

/** Five reads for a whole page, whatever its length. */
export async function cardFacts(tenantId: string, items: QueueItem[]): Promise<Record<string, CardFacts>> {
  const orderIds = [...new Set(items.map((item) => item.orderId))];
  const requestIds = items.map((item) => item.id);
  const [requests, orders, refunds, siblings] = await Promise.all([
    findCardRequests(db, tenantId, requestIds),
    findCardOrders(db, tenantId, orderIds),
    findCardRefunds(db, tenantId, orderIds),
    findPendingOnOrders(db, tenantId, orderIds, SIBLINGS_SHOWN + 1, COUNT_UP_TO),
  ]);
  const peopleIds = [
    ...new Set(
      requests
        .flatMap((request) => [request.requestedById, request.firstApproverId])
        .concat(siblings.map((sibling) => sibling.requestedById))
        .filter((id): id is string => id !== null),
    ),
  ];
  const people = new Map((await findTenantPeople(db, tenantId, peopleIds)).map((user) => [user.id, user]));
  const orderById = new Map(orders.map(({ id, ...order }) => [id, order]));
  const facts: Record<string, CardFacts> = {};
  for (const request of requests) {
    const item = items.find((candidate) => candidate.id === request.id)!;
    const first = request.firstApproverId ? people.get(request.firstApproverId) : undefined;
    facts[request.id] = {
      customer: request.conversation.customer,
      requester: people.get(request.requestedById) ?? null,
      orderNow: orderById.get(item.orderId) ?? null,
      refunds: refunds
        .filter((refund) => refund.orderId === item.orderId)
        .map(({ orderId: _order, createdAt, ...refund }) => ({ ...refund, createdAt: createdAt.toISOString() })),
      ...siblingsOf(item, siblings, people),
      firstApprover:
        first && request.firstApprovedAt
          ? {
              name: first.name,
              email: first.email,
              at: request.firstApprovedAt.toISOString(),
              cents: amountCentsOf(request.firstApprovedArgs),
            }
          : null,
    };
  }
  return facts;
}

/** The tenant's thresholds for step-up and for two approvers; throws when there is no such tenant. */
export async function deskPolicy(tenantId: string): Promise<DeskPolicy> {
  const policy = await findDeskPolicy(db, tenantId);
  if (!policy) throw new Error(`no tenant ${tenantId}`);
  return policy;
}

/** The queue's filter choices: the tenant's agents and the tools that have pending requests. */
export async function queueChoices(tenantId: string) {
  const [agents, upstream] = await Promise.all([findAgents(db, tenantId), holdableToolNames(tenantId)]);
  return { agents, tools: [...TOOL_NAMES.filter((name) => findTool(name)?.effect !== "read"), ...upstream] };
}
