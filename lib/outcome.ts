import { formatMoney } from "./money";

/** The tool a call is recorded under when it was refused before it named one the conversation offers. */
export const UNKNOWN_TOOL = "(unknown)";

// The SPEC section 5 table in one place: every code fixes its kind and stage.
const CODES = {
  "rate.limited": ["rejected", "rate"],
  "parse.too-large": ["rejected", "parse"],
  "parse.too-deep": ["rejected", "parse"],
  "parse.malformed": ["rejected", "parse"],
  "parse.duplicate-key": ["rejected", "parse"],
  "parse.envelope-invalid": ["rejected", "parse"],
  "tool.unknown": ["rejected", "allowlist"],
  "tool.not-available": ["rejected", "allowlist"],
  "scope.missing": ["denied", "scope"],
  "argument.host-owned": ["rejected", "schema"],
  "schema.invalid": ["rejected", "schema"],
  "amount.invalid": ["rejected", "semantic"],
  "currency.invalid": ["rejected", "semantic"],
  "reason.invalid": ["rejected", "semantic"],
  "order.not-found": ["rejected", "context"],
  "call.not-found": ["rejected", "context"],
  "call-key.missing": ["rejected", "idempotency"],
  "call-key.reused": ["rejected", "idempotency"],
  "order.not-delivered": ["rejected", "state"],
  "order.already-shipped": ["rejected", "state"],
  "currency.mismatch": ["rejected", "state"],
  "amount.exceeds-refundable": ["rejected", "state"],
  "refund.in-progress": ["unavailable", "state"],
  "agent.not-authorized": ["denied", "policy"],
  "order.fraud-hold": ["denied", "policy"],
  "policy.rule-denied": ["denied", "policy"],
  "policy.rules-failed": ["unavailable", "policy"],
  "tool.denied": ["denied", "policy"],
  "approval.required": ["pending_approval", "approval"],
  "approval.denied": ["denied", "approval"],
  "approval.expired": ["unavailable", "approval"],
  "approval.withdrawn": ["unavailable", "approval"],
  "upstream.definition-changed": ["unavailable", "approval"],
  "order.changed": ["unavailable", "execute"],
  "refund.outcome-unknown": ["unavailable", "execute"],
  "host.error": ["unavailable", "execute"],
  "upstream.outcome-unknown": ["unavailable", "execute"],
  "upstream.unreachable": ["unavailable", "execute"],
  "upstream.resolved-not-done": ["unavailable", "execute"],
  "refund.issued": ["executed", "execute"],
  "address.updated": ["executed", "execute"],
  "email.queued": ["executed", "execute"],
  "order.read": ["executed", "execute"],
  "call.read": ["executed", "execute"],
  "upstream.called": ["executed", "execute"],
  "upstream.resolved-done": ["executed", "execute"],
} as const satisfies Record<string, readonly [Kind, Stage]>;

export type Kind = "rejected" | "denied" | "pending_approval" | "unavailable" | "executed";
export type Stage =
  | "rate"
  | "parse"
  | "allowlist"
  | "scope"
  | "schema"
  | "semantic"
  | "context"
  | "idempotency"
  | "state"
  | "policy"
  | "approval"
  | "execute";
export type Code = keyof typeof CODES;
export const ALL_CODES = Object.keys(CODES) as Code[];

/** No longer waiting: neither for a supervisor nor for the outside system an approved effect went to. */
export const isFinal = (o: Outcome) => o.kind !== "pending_approval" && !outcomeUnknown(o);

/** Sent to the outside system, its answer not known: never sent again by itself, never reported as failed. */
const outcomeUnknown = (o: Outcome) => o.code === "refund.outcome-unknown" || o.code === "upstream.outcome-unknown";

/** Every status the model can read; output schemas list exactly these. */
export const MODEL_STATUSES = [
  "ok",
  "invalid_arguments",
  "invalid_request",
  "not_found",
  "not_allowed",
  "needs_approval",
  "pending_confirmation",
  "unavailable",
] as const;
export type ModelStatus = (typeof MODEL_STATUSES)[number];

export interface Issue {
  path: string;
  problem: string;
}

export interface ApprovalView {
  id: string;
  expires_at: string;
  preview: unknown;
}

/** The earlier call whose effect on the order still awaits the outside system's answer (`refund.in-progress`). */
export interface AwaitedCall {
  call_id: string;
  amount_cents: number;
  currency: string;
}

export interface Outcome {
  kind: Kind;
  stage: Stage;
  code: Code;
  issues?: Issue[];
  result?: unknown;
  approval?: ApprovalView;
  /** Why a decided call did not execute, in plain words the model may read (never an internal reason). */
  reason?: string;
  /** The tenant's rules that hold the call for a person, by id (their reasons are `reason`). */
  rules?: string[];
  /** A supervisor's narrowing edit: the arguments approved, when they differ from the proposal. */
  decision?: { approved_arguments: Record<string, unknown> };
  /** For `refund.in-progress`: the earlier call the model should wait on rather than propose the refund again. */
  awaiting?: AwaitedCall;
  /** For a tool name the conversation does not offer: the name of its own tool the model most likely meant. */
  nearest?: string;
}

/** What the agent runtime should show the model: never internal reasons such as a fraud hold. */
export interface ModelProjection {
  status: ModelStatus;
  paths?: string[];
  result?: unknown;
  /**
   * For arguments to fix (the schema and semantic stages): each path with what it must be; for a fault of the client
   * rather than of the arguments, or a proposal that is no envelope of a call (the parse stage): what to change
   * before sending the call again; for a refund the order already has in flight: to wait on
   * that call instead of proposing it again; for a tool name the conversation does not offer: to call only its listed
   * tools, and which of them it most likely meant, when one is near.
   */
  message?: string;
  /** Why a supervisor's decision or its re-check stopped the call; or the tenant's rules' reason for a hold. */
  reason?: string;
  /** The tenant's rules that hold the call, by id. */
  rules?: string[];
  /** For a refund the order already has in flight: the call to wait on with `get_call_status`. */
  awaiting?: AwaitedCall;
}

// Faults of the calling runtime, not of the model's arguments: the model is told what its runtime must change.
const CLIENT_FAULTS: Partial<Record<Code, string>> = {
  "call-key.missing":
    "The call key must be 1 to 200 printable ASCII characters. Fix the Idempotency-Key header (or _meta io.toolgate/idempotency-key), or send none: toolgate then keys the call by its content.",
  "call-key.reused":
    "This call key was already used for a call with other arguments. Send this call with a new call key, or with none: toolgate then keys it by its content, so an identical retry is answered with the first outcome.",
};

/** A proposal that never became a call of a tool (the parse stage) has no argument to point at: what to send instead. */
const ENVELOPE_FAULTS: Partial<Record<Code, string>> = {
  "parse.too-large": "The proposal is over 16 KiB (16,384 bytes of JSON). Send the call with shorter arguments.",
  "parse.too-deep":
    "The proposal nests objects and arrays more than 8 levels deep. Send the call with flatter arguments.",
  "parse.malformed":
    'The proposal is not valid JSON text (or a string in it holds a NUL or an unpaired surrogate). Send one JSON object: {"name": "<tool>", "arguments": {...}}.',
  "parse.duplicate-key": "The proposal names one key twice in the same object. Send each key once.",
  "parse.envelope-invalid":
    'The proposal is not the envelope of a call. Send one JSON object with exactly two keys: "name" (the tool\'s name, a string) and "arguments" (an object of its arguments).',
};

export function outcome(
  code: Code,
  extra: Pick<Outcome, "issues" | "result" | "approval" | "reason" | "decision" | "awaiting" | "nearest"> = {},
): Outcome {
  const [kind, stage] = CODES[code];
  return { kind, stage, code, ...extra };
}

/**
 * A call's outcome as a read shows it: one still waiting on an approval that has `lapsed` reads as `approval.expired`,
 * the outcome the expiry job records for it. Reading writes nothing.
 */
export const outcomeAsRead = (recorded: Outcome, lapsed: boolean): Outcome =>
  lapsed && recorded.kind === "pending_approval" ? outcome("approval.expired") : recorded;

/** A stage either hands a value to the next stage or ends the sequence with an outcome. */
export type StageResult<T> = { ok: true; value: T } | { ok: false; outcome: Outcome };

export const pass = <T>(value: T): StageResult<T> => ({ ok: true, value });
export const stop = (code: Code, extra?: Pick<Outcome, "issues" | "result" | "approval">): StageResult<never> => ({
  ok: false,
  outcome: outcome(code, extra),
});

export function modelProjection(o: Outcome): ModelProjection {
  const shown = projectKind(o);
  // A rule that holds is named with its reason; one that denies is not (a deny's code can be an internal reason).
  const rules = o.kind === "pending_approval" && o.rules ? { rules: o.rules } : {};
  return o.reason === undefined ? shown : { ...shown, reason: o.reason, ...rules };
}

function projectKind(o: Outcome): ModelProjection {
  switch (o.kind) {
    case "executed":
      return o.decision ? { status: "ok", result: o.result, message: NARROWED } : { status: "ok", result: o.result };
    case "pending_approval":
      return { status: "needs_approval" };
    case "unavailable":
      // May have happened: the model must not retry it as if it had failed, only check the call later.
      if (outcomeUnknown(o)) return { status: "pending_confirmation" };
      // Another refund of this order awaits the provider: it may have happened, so the model waits on that call.
      if (o.code === "refund.in-progress") return awaitingProjection(o.awaiting);
      return { status: "unavailable" };
    case "denied":
      return { status: "not_allowed", message: DENIED[o.code] ?? NOT_ALLOWED };
    case "rejected":
      if (o.code === "order.not-found" || o.code === "call.not-found")
        return { status: "not_found", message: NOT_FOUND[o.code] };
      if (o.stage === "parse") return { status: "invalid_arguments", paths: [], message: ENVELOPE_FAULTS[o.code] };
      if (o.stage === "schema" || o.stage === "semantic") {
        const issues = o.issues ?? [];
        return {
          status: "invalid_arguments",
          paths: issues.map((issue) => issue.path),
          ...(issues.length > 0 ? { message: argumentsToFix(issues) } : {}),
        };
      }
      if (o.stage === "idempotency") return { status: "invalid_request", message: CLIENT_FAULTS[o.code] };
      if (o.code === "rate.limited") return { status: "unavailable" };
      if (o.code === "tool.unknown" || o.code === "tool.not-available")
        return {
          status: "not_allowed",
          message: o.nearest ? `${NO_SUCH_TOOL} Did you mean ${o.nearest}?` : NO_SUCH_TOOL,
        };
      if (o.stage === "state") return { status: "not_allowed", message: ORDER_STATE[o.code] };
      return { status: "not_allowed" };
  }
}

/**
 * For a call the model must come back to (held for a supervisor, or sent with its outcome not yet known, never an
 * earlier refund it waits on): the call's id, a held call's expiry, and what to do meanwhile. Empty for any other.
 */
export function waitingOn(callId: string, o: Outcome): { call_id?: string; expires_at?: string; message?: string } {
  if (o.kind === "pending_approval")
    return {
      call_id: callId,
      ...(o.approval ? { expires_at: o.approval.expires_at } : {}),
      message: `A supervisor must approve this call before it runs; it has not run. Do not propose it again. Tell the user it waits for a supervisor, and read its outcome with get_call_status (call_id ${callId}, wait_seconds up to 30).`,
    };
  if (o.kind === "unavailable" && outcomeUnknown(o))
    return {
      call_id: callId,
      message: `This call was sent and its outcome is not confirmed yet: it may have happened. Do not propose it again. Read its outcome later with get_call_status (call_id ${callId}, wait_seconds up to 30).`,
    };
  return {};
}

// Why the order's state refuses the call, in nothing the model cannot read itself: get_order answers the order's
// status, currency, total and what was refunded so far.
const ORDER_STATE: Partial<Record<Code, string>> = {
  "amount.exceeds-refundable":
    "The amount is more than this order has left to refund. Read the order with get_order (total_cents less refunded_cents is what is left) and propose at most that, or tell the user.",
  "order.not-delivered":
    "Only a delivered order can be refunded, and this one is not delivered yet. Do not propose the refund again now; tell the user, who can ask again once get_order shows it delivered.",
  "order.already-shipped":
    "This order has already shipped, so its shipping address can no longer be changed. Do not propose the change again; tell the user.",
  "currency.mismatch":
    "The currency must be the order's own. Read the order with get_order and propose the call again in its currency.",
};

// A missing order and another customer's read alike: the model learns nothing of orders it may not see.
const NOT_FOUND: Partial<Record<Code, string>> = {
  "order.not-found":
    "No order with this id is open to this conversation. Use an order id exactly as the user or get_order gave it, never a guessed one; if the user gave it, ask them to check it.",
  "call.not-found":
    "No call with this id was made in this conversation. Use a call_id exactly as an earlier answer in this conversation gave it.",
};

// A denial the model may be told the cause of; every other reads alike (NOT_ALLOWED), so a fraud hold is not revealed.
const DENIED: Partial<Record<Code, string>> = {
  "scope.missing":
    "This agent is not permitted to use this tool in this conversation. Do not propose it again; tell the user that a person has to do this.",
  "approval.denied":
    "A supervisor denied this call; it did not run. Do not propose it again. Tell the user it was declined, with the supervisor's reason when there is one.",
};

const NOT_ALLOWED =
  "This call is not allowed, and proposing it again will not change that. Do not propose it again; tell the user that a person has to handle it.";

/** An approval that changed the arguments (a lower amount): the model must tell what was done, not what it asked. */
const NARROWED =
  "A supervisor approved this call with other arguments than you proposed (for a refund, a lower amount): the result is what was done; tell the customer that, not what you asked for.";

const NO_SUCH_TOOL =
  "No tool of that name is offered in this conversation. Call only the tools listed for it, by their exact names.";

/** The arguments to change, in words: each path with what it must be (never the value sent). */
const argumentsToFix = (issues: Issue[]) =>
  `Fix these arguments, then propose the call again. ${issues.map((issue) => `${issue.path}: ${issue.problem}`).join("; ")}.`;

/** `refund.in-progress` as the model reads it: never "unavailable", which would invite it to try again later. */
function awaitingProjection(awaiting: AwaitedCall | undefined): ModelProjection {
  if (!awaiting) {
    return {
      status: "pending_confirmation",
      message:
        "A refund on this order is awaiting the payment provider's confirmation and may already have been paid. Do not propose a refund on this order again until it is confirmed.",
    };
  }
  const amount = `${formatMoney(awaiting.amount_cents, awaiting.currency)} (${awaiting.amount_cents} cents)`;
  return {
    status: "pending_confirmation",
    awaiting,
    message: `A refund of ${amount} on this order (call ${awaiting.call_id}) is awaiting the payment provider's confirmation and may already have been paid. Do not propose it again: wait on it with get_call_status (call_id ${awaiting.call_id}, wait_seconds up to 30).`,
  };
}

/**
 * Whether an outcome binds the call key for good. Transient ones leave it free for a retry, except an
 * effect whose outcome is not yet known: retrying that under a new decision could repeat it.
 */
export function bindsCallKey(o: Outcome): boolean {
  return o.kind !== "unavailable" || outcomeUnknown(o);
}
