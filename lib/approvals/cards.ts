import "server-only";
import { db } from "../db";
import { findTool, TOOL_NAMES } from "../tools/registry";
import type { QueueItem } from "./queue";

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
  firstApprover: { name: string; email: string; at: string } | null;
}

export interface DeskPolicy {
  stepUpAboveCents: number;
  twoPersonAboveCents: number;
}

/** Five reads for a whole page, whatever its length. */
export async function cardFacts(tenantId: string, items: QueueItem[]): Promise<Record<string, CardFacts>> {
  const orderIds = [...new Set(items.map((item) => item.orderId))];
  const requestIds = items.map((item) => item.id);
  const [requests, orders, refunds, siblings] = await Promise.all([
    db.approvalRequest.findMany({
      where: { id: { in: requestIds }, tenantId },
      select: {
        id: true,
        firstApproverId: true,
        firstApprovedAt: true,
        requestedById: true,
        conversation: { select: { customer: { select: { id: true, email: true } } } },
      },
    }),
    db.order.findMany({
      where: { id: { in: orderIds }, tenantId },
      select: {
        id: true,
        status: true,
        totalCents: true,
        refundedCents: true,
        currency: true,
        version: true,
        refundPending: true,
        fraudHold: true,
      },
    }),
    db.refund.findMany({
      where: { orderId: { in: orderIds }, tenantId },
      orderBy: { createdAt: "asc" },
      select: { id: true, orderId: true, amountCents: true, currency: true, status: true, createdAt: true },
    }),
    db.approvalRequest.findMany({
      where: { tenantId, status: "pending", orderId: { in: orderIds }, expiresAt: { gt: new Date() } },
      orderBy: { createdAt: "asc" },
      select: { id: true, orderId: true, impactCents: true, toolName: true },
      take: 500,
    }),
  ]);
  const peopleIds = [
    ...new Set(
      requests.flatMap((request) =>
        [request.requestedById, request.firstApproverId].filter((id): id is string => id !== null),
      ),
    ),
  ];
  const people = new Map(
    (
      await db.user.findMany({
        where: { id: { in: peopleIds }, tenantId },
        select: { id: true, name: true, email: true },
      })
    ).map((user) => [user.id, user]),
  );
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
          ? { name: first.name, email: first.email, at: request.firstApprovedAt.toISOString() }
          : null,
    };
  }
  return facts;
}

export async function deskPolicy(tenantId: string): Promise<DeskPolicy> {
  return db.tenant.findUniqueOrThrow({
    where: { id: tenantId },
    select: { stepUpAboveCents: true, twoPersonAboveCents: true },
  });
}

/** The queue's filter choices: the tenant's agents and the tools that have pending requests. */
export async function queueChoices(tenantId: string) {
  const agents = await db.user.findMany({
    where: { tenantId, role: "AGENT" },
    orderBy: { email: "asc" },
    select: { id: true, name: true, email: true },
  });
  return { agents, tools: TOOL_NAMES.filter((name) => findTool(name)?.effect !== "read") };
}
