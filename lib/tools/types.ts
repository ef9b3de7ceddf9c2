import type { z } from "zod";
import type { Db } from "../db";
import type { Prisma } from "../generated/prisma/client";
import type { ConversationWaiter } from "../live";
import type { Code, Outcome } from "../outcome";

export type Effect = "read" | "reversible" | "irreversible";
export type Scope = "orders:read" | "orders:write" | "refunds:write" | "email:send";

/** The order as every check of one call saw it; `version` makes the write conditional on it. */
export interface OrderFacts {
  id: string;
  tenantId: string;
  customerId: string;
  customerEmail: string;
  totalCents: number;
  refundedCents: number;
  currency: string;
  status: string;
  addressLine1: string;
  postalCode: string;
  fraudHold: boolean;
  refundPending: boolean;
  version: number;
}

/** What a write may change on its order; anything left out stays as it is. */
export interface OrderChange {
  refundedCentsIncrement?: number;
  refundPending?: boolean;
  addressLine1?: string;
  postalCode?: string;
}

/**
 * An irreversible effect a tool made (or may have made) on an order: `issued` is done, `unknown` awaits the outside
 * system's answer after an uncertain attempt, `in_progress` has been sent (or is about to be) and not answered yet.
 */
export interface EarlierEffect {
  callId: string;
  /** The conversation whose call made it. */
  conversationId: string;
  amountCents: number;
  currency: string;
  status: "issued" | "unknown" | "in_progress";
  at: Date;
}

/** A refund as the host decided it, from the checked call and the order, never from model output alone. */
export interface RefundDecision {
  tenantId: string;
  orderId: string;
  orderVersion: number;
  amountCents: number;
  currency: string;
  reason: string;
}

/** Who a refund concerns beside its order: kept on its row for the rules' facts, outside the decision and its key. */
export interface RefundParty {
  agentId: string;
  customerId: string;
}

/** What moves money, handed to the tools by whoever runs them (lib/payments/port.ts): tools know no feature. */
export interface PaymentPort {
  /**
   * Step 1 of a refund, in the call's transaction: the reservation under a key derived from the decision, as a
   * statement the gateway runs with the order's move (`ToolEffect`).
   */
  reserveRefund(
    decision: RefundDecision,
    callId: string,
    party: RefundParty,
  ): { refundId: string; statement: Prisma.Sql };
  /** Step 2, after the call committed: the provider call and the settle. */
  completeRefundOfCall(callId: string): Promise<Outcome>;
  /** Step 2 by the process that just committed the call, from its decision: no read before the provider call. */
  completeReservedRefund(reserved: { callId: string; decision: RefundDecision; committedAt: number }): Promise<Outcome>;
  /**
   * For the statement that reads a call's facts (the order as `o`): the order's refunds issued, unknown or in progress
   * within the last `hours`, as a scalar subquery giving the JSON array of `EarlierEffect`s (the duplicate guard).
   */
  recentRefunds(hours: number): Prisma.Sql;
  /** The order's refund still awaiting the provider's answer, if any. */
  findUnsettledRefund(client: Db, orderId: string): Promise<EarlierEffect | null>;
}

/** The functions of the features above that a tool's effect needs, passed in like the gateway's own ports. */
export interface ToolPorts {
  payments: PaymentPort;
}

export interface ExecutionContext<A> {
  args: A;
  order: OrderFacts;
  callId: string;
  tenantId: string;
  conversationId: string;
  /** The agent of the call's conversation. */
  agentId: string;
  ports: ToolPorts;
}

/**
 * A tool's effect: the result its call answers with and the statements that write its rows. The gateway runs them in
 * the one statement that moves the order at the version the checks saw, so each must read the common table expression
 * `moved` (the order's row, there only when it moved: `FROM moved`, or `, moved` after a FROM) to write only with it.
 */
export interface ToolEffect {
  result: unknown;
  writes?: Prisma.Sql[];
}

/** An execution as its transaction committed it, for the external half that follows. */
export type ExecutedCall<A> = Pick<ExecutionContext<A>, "args" | "order" | "tenantId" | "conversationId">;

/** What every tool has: what the model sees (name, description, the JSON Schema generated from `schema`) and its effect. */
export interface ToolFace<A = Record<string, unknown>> {
  name: string;
  description: string;
  schema: z.ZodType<A>;
  /** Value checks (range, format, enum) on these fields are semantic failures with these codes, not schema failures. */
  semanticCodes?: Partial<Record<string, Code>>;
  effect: Effect;
}

/**
 * Both halves of a tool that acts on an order. The model sees name, description and the JSON Schema generated
 * from `schema`; everything else is the host's and never leaves it.
 */
export interface ToolDefinition<A = Record<string, unknown>> extends ToolFace<A> {
  scope: Scope;
  orderId(args: A): string;
  /** The first state rule the current order breaks, or null. */
  state(args: A, order: OrderFacts): Code | null;
  /** Numeric arguments a supervisor may lower (never raise) when approving; every other argument is fixed. */
  narrowable?: readonly string[];
  /** Irreversible money impact in minor units, in the order's currency. */
  impactCents(args: A): number;
  /** Changes to the order row, applied conditionally on the version the checks saw. */
  orderChanges?(args: A, order: OrderFacts): OrderChange;
  /** The effect, decided before anything is written: what the call answers and the rows it writes (`ToolEffect`). */
  execute(context: ExecutionContext<A>): ToolEffect;
  executedCode: Code;
  /**
   * For an effect a model could repeat under a call key of its own: what this tool did, or may have done, to the
   * order within the last `windowHours`, for the duplicate-intent guard (stage 10): a scalar subquery on the order
   * `o` giving the JSON array of those `EarlierEffect`s, newest first, which the gateway reads with the order in one
   * statement (stage 7); and the order's unsettled effect (any age) for the answer to a call its state rules stopped
   * because of it.
   */
  earlierEffects?: {
    recent(windowHours: number, ports: ToolPorts): Prisma.Sql;
    unsettled(client: Db, order: OrderFacts, ports: ToolPorts): Promise<EarlierEffect | null>;
  };
  /**
   * For an effect that leaves the host: the code its call holds when the local transaction commits, before
   * the outside system has answered, and the step that then performs the effect and settles the call.
   */
  external?: {
    pendingCode: Code;
    /**
     * `executed`: the execution the caller just committed, when it is the one completing it (not after a restart),
     * with when it committed (`performance.now()`).
     */
    complete(
      call: { callId: string; executed?: ExecutedCall<A> & { committedAt: number } },
      ports: ToolPorts,
    ): Promise<Outcome>;
  };
}

export interface CallsContext<A> {
  client: Db;
  args: A;
  conversationId: string;
  /** The tools whose calls the caller may read: those it can call itself (`callableTools`). */
  callable: readonly string[];
  /** Present when the caller can wait for the conversation to change. */
  waitForChange?: ConversationWaiter;
}

/**
 * A tool that reads the conversation's own calls instead of an order: exposed in every conversation, it needs no
 * scope, and its answer takes the place of the order stages (7 to 12). It only reads.
 */
export interface CallsTool<A = Record<string, unknown>> extends ToolFace<A> {
  effect: "read";
  readCalls(context: CallsContext<A>): Promise<Outcome>;
}

export type AnyTool = ToolDefinition | CallsTool;

export const readsCalls = (tool: AnyTool): tool is CallsTool => "readCalls" in tool;

export function defineCallsTool<A>(definition: CallsTool<A>): CallsTool<A> {
  return definition;
}

export function defineTool<A>(definition: ToolDefinition<A>): ToolDefinition<A> {
  return definition;
}

export const ORDER_ID = /^ord_[0-9]{4,8}$/;
