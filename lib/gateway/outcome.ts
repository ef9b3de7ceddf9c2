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
  "call-key.missing": ["rejected", "idempotency"],
  "call-key.reused": ["rejected", "idempotency"],
  "order.not-delivered": ["rejected", "state"],
  "order.already-shipped": ["rejected", "state"],
  "currency.mismatch": ["rejected", "state"],
  "amount.exceeds-refundable": ["rejected", "state"],
  "refund.in-progress": ["unavailable", "state"],
  "agent.not-authorized": ["denied", "policy"],
  "order.fraud-hold": ["denied", "policy"],
  "approval.required": ["pending_approval", "approval"],
  "approval.denied": ["denied", "approval"],
  "approval.expired": ["unavailable", "approval"],
  "order.changed": ["unavailable", "execute"],
  "refund.outcome-unknown": ["unavailable", "execute"],
  "host.error": ["unavailable", "execute"],
  "refund.issued": ["executed", "execute"],
  "address.updated": ["executed", "execute"],
  "email.queued": ["executed", "execute"],
  "order.read": ["executed", "execute"],
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

export type ModelStatus = "ok" | "invalid_arguments" | "not_found" | "not_allowed" | "needs_approval" | "unavailable";

export interface Issue {
  path: string;
  problem: string;
}

export interface ApprovalView {
  id: string;
  expires_at: string;
  preview: unknown;
}

export interface Outcome {
  kind: Kind;
  stage: Stage;
  code: Code;
  issues?: Issue[];
  result?: unknown;
  approval?: ApprovalView;
  /** A supervisor's decision as the agent needs it: the reason for a denial, the arguments approved when narrowed. */
  decision?: { reason?: string; approved_arguments?: Record<string, unknown> };
}

/** What the agent runtime should show the model: never internal reasons such as a fraud hold. */
export interface ModelProjection {
  status: ModelStatus;
  paths?: string[];
  result?: unknown;
}

export function outcome(code: Code, extra: Pick<Outcome, "issues" | "result" | "approval" | "decision"> = {}): Outcome {
  const [kind, stage] = CODES[code];
  return { kind, stage, code, ...extra };
}

/** A stage either hands a value to the next stage or ends the sequence with an outcome. */
export type StageResult<T> = { ok: true; value: T } | { ok: false; outcome: Outcome };

export const pass = <T>(value: T): StageResult<T> => ({ ok: true, value });
export const stop = (code: Code, extra?: Pick<Outcome, "issues" | "result" | "approval">): StageResult<never> => ({
  ok: false,
  outcome: outcome(code, extra),
});

export function modelProjection(o: Outcome): ModelProjection {
  switch (o.kind) {
    case "executed":
      return { status: "ok", result: o.result };
    case "pending_approval":
      return { status: "needs_approval" };
    case "unavailable":
      return { status: "unavailable" };
    case "denied":
      return { status: "not_allowed" };
    case "rejected":
      if (o.code === "order.not-found") return { status: "not_found" };
      if (o.stage === "parse" || o.stage === "schema" || o.stage === "semantic") {
        return { status: "invalid_arguments", paths: (o.issues ?? []).map((issue) => issue.path) };
      }
      if (o.code === "rate.limited" || o.stage === "idempotency") return { status: "unavailable" };
      return { status: "not_allowed" };
  }
}

/**
 * Whether an outcome binds the call key for good. Transient ones leave it free for a retry, except an
 * effect whose outcome is not yet known: retrying that under a new decision could repeat it.
 */
export function bindsCallKey(o: Outcome): boolean {
  return o.kind !== "unavailable" || o.code === "refund.outcome-unknown";
}
