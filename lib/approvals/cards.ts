import "server-only";
import { db } from "../db";
import { findTool, TOOL_NAMES } from "../tools/registry";
import type { QueueItem } from "./queue";
import {
  findAgents,
  findCardOrders,
  findCardRefunds,
  findCardRequests,
  findDeskPolicy,
  findPendingOnOrders,
  findTenantPeople,
  type DeskPolicy,
} from "./sql";

export type { DeskPolicy } from "./sql";

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
  /** Other pending requests on the same order, so they are read and decided together. */
  siblings: { id: string; impactCents: number; toolName: string }[];
  /** The first of two approvals, with the amount it approved (a second approval approves that amount). */
  firstApprover: { name: string; email: string; at: string; cents: number | null } | null;
}

function approvedCents(args: unknown): number | null {
  const cents = (args as { amount_cents?: unknown } | null)?.amount_cents;
  return typeof cents === "number" ? cents : null;
}

/** Five reads for a whole page, whatever its length. */
export async function cardFacts(tenantId: string, items: QueueItem[]): Promise<Record<string, CardFacts>> {
  const orderIds = [...new Set(items.map((item) => item.orderId))];
  const requestIds = items.map((item) => item.id);
  const [requests, orders, refunds, siblings] = await Promise.all([
    findCardRequests(db, tenantId, requestIds),
    findCardOrders(db, tenantId, orderIds),
    findCardRefunds(db, tenantId, orderIds),
    findPendingOnOrders(db, tenantId, orderIds),
  ]);
  const peopleIds = [
    ...new Set(
      requests.flatMap((request) =>
        [request.requestedById, request.firstApproverId].filter((id): id is string => id !== null),
      ),
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
      siblings: siblings
        .filter((other) => other.orderId === item.orderId && other.id !== item.id)
        .map(({ orderId: _order, ...other }) => other),
      firstApprover:
        first && request.firstApprovedAt
          ? {
              name: first.name,
              email: first.email,
              at: request.firstApprovedAt.toISOString(),
              cents: approvedCents(request.firstApprovedArgs),
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
  const agents = await findAgents(db, tenantId);
  return { agents, tools: TOOL_NAMES.filter((name) => findTool(name)?.effect !== "read") };
}
