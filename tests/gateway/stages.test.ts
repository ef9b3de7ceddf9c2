import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkAllowlist } from "@/lib/gateway/checks/allowlist";
import { MAX_DEPTH, MAX_ENVELOPE_BYTES } from "@/lib/gateway/checks/parse";
import { ALL_CODES, bindsCallKey, modelProjection, outcome, type Code } from "@/lib/outcome";
import { heldBecause, needsApproval } from "@/lib/gateway/decide/policy";
import { checkSchema } from "@/lib/gateway/checks/schema";
import { checkScope } from "@/lib/gateway/checks/scope";
import { checkSemantics } from "@/lib/gateway/checks/semantic";
import { checkState } from "@/lib/gateway/context/state";
import type { TenantPolicy } from "@/lib/gateway/types";
import { getOrder } from "@/lib/tools/get-order";
import { issueRefund } from "@/lib/tools/issue-refund";
import { sendStatusEmail } from "@/lib/tools/send-status-email";
import type { OrderFacts, ToolDefinition, ToolFace } from "@/lib/tools/types";
import { updateShippingAddress } from "@/lib/tools/update-shipping-address";

// The stages as pure functions: the decisions they make without data, pinned down case by case.

const refund = issueRefund as unknown as ToolDefinition;
const address = updateShippingAddress as unknown as ToolDefinition;
const read = getOrder as unknown as ToolDefinition;
const email = sendStatusEmail as unknown as ToolDefinition;

describe("the SPEC outcome table and the model projection", () => {
  // Every denial whose cause the model may not learn (a fraud hold among them) reads alike.
  const NOT_ALLOWED = expect.stringMatching(/^This call is not allowed/);
  const MODEL: Record<string, { status: string; paths?: string[]; message?: unknown }> = {
    "rate.limited": { status: "unavailable" },
    "parse.too-large": {
      status: "invalid_arguments",
      paths: [],
      message: expect.stringContaining(`${MAX_ENVELOPE_BYTES.toLocaleString("en-US")} bytes`),
    },
    "parse.too-deep": {
      status: "invalid_arguments",
      paths: [],
      message: expect.stringContaining(`${MAX_DEPTH} levels`),
    },
    "parse.malformed": { status: "invalid_arguments", paths: [], message: expect.stringContaining("not valid JSON") },
    "parse.duplicate-key": { status: "invalid_arguments", paths: [], message: expect.stringContaining("key twice") },
    "parse.envelope-invalid": {
      status: "invalid_arguments",
      paths: [],
      message: expect.stringContaining('exactly two keys: "name"'),
    },
    "tool.unknown": { status: "not_allowed", message: expect.stringContaining("No tool of that name") },
    "tool.not-available": { status: "not_allowed", message: expect.stringContaining("No tool of that name") },
    "scope.missing": { status: "not_allowed", message: expect.stringContaining("not permitted to use this tool") },
    "schema.invalid": { status: "invalid_arguments", paths: [] },
    "amount.invalid": { status: "invalid_arguments", paths: [] },
    "order.not-found": { status: "not_found", message: expect.stringContaining("never a guessed one") },
    "call-key.missing": { status: "invalid_request", message: expect.stringContaining("printable ASCII") },
    "call-key.reused": {
      status: "invalid_request",
      message: expect.stringContaining("Send this call with a new call key, or with none"),
    },
    "order.not-delivered": { status: "not_allowed", message: expect.stringContaining("not delivered yet") },
    "order.already-shipped": { status: "not_allowed", message: expect.stringContaining("already shipped") },
    "currency.mismatch": { status: "not_allowed", message: expect.stringContaining("the order's own") },
    "call.not-found": { status: "not_found", message: expect.stringContaining("No call with this id") },
    "amount.exceeds-refundable": {
      status: "not_allowed",
      message: expect.stringContaining("more than this order has left to refund"),
    },
    "refund.in-progress": { status: "pending_confirmation", message: expect.stringContaining("Do not propose") },
    "agent.not-authorized": { status: "not_allowed", message: NOT_ALLOWED },
    "order.fraud-hold": { status: "not_allowed", message: NOT_ALLOWED },
    "approval.required": { status: "needs_approval" },
    "approval.denied": { status: "not_allowed", message: expect.stringContaining("A supervisor denied this call") },
    "approval.expired": { status: "unavailable" },
    "approval.withdrawn": { status: "unavailable" },
    "refund.outcome-unknown": { status: "pending_confirmation" },
    "host.error": { status: "unavailable" },
    "tool.denied": { status: "not_allowed", message: NOT_ALLOWED },
    "upstream.outcome-unknown": { status: "pending_confirmation" },
    "upstream.unreachable": { status: "unavailable" },
    "upstream.definition-changed": { status: "unavailable" },
    "upstream.resolved-not-done": { status: "unavailable" },
  };
  it.each(Object.entries(MODEL))("%s is shown to the model as %j", (code, model) => {
    expect(modelProjection(outcome(code as Code))).toEqual(model);
  });

  it("executed outcomes carry their result to the model; paths and the words of what to fix come from the issues", () => {
    expect(modelProjection(outcome("order.read", { result: { a: 1 } }))).toEqual({ status: "ok", result: { a: 1 } });
    const issues = [
      { path: "amount_cents", problem: "must be at least 1" },
      { path: "note", problem: "unknown field" },
    ];
    expect(modelProjection(outcome("schema.invalid", { issues }))).toEqual({
      status: "invalid_arguments",
      paths: ["amount_cents", "note"],
      message:
        "Fix these arguments, then propose the call again. amount_cents: must be at least 1; note: unknown field.",
    });
  });

  it("fixes kind and stage by code, for every code of the SPEC", () => {
    expect(ALL_CODES).toHaveLength(46);
    expect(outcome("upstream.called")).toMatchObject({ kind: "executed", stage: "execute" });
    expect(outcome("upstream.definition-changed")).toMatchObject({ kind: "unavailable", stage: "approval" });
    expect(outcome("rate.limited")).toEqual({ kind: "rejected", stage: "rate", code: "rate.limited" });
    expect(outcome("policy.rule-denied")).toMatchObject({ kind: "denied", stage: "policy" });
    expect(outcome("policy.rules-failed")).toMatchObject({ kind: "unavailable", stage: "policy" });
    expect(outcome("scope.missing")).toMatchObject({ kind: "denied", stage: "scope" });
    expect(outcome("refund.in-progress")).toMatchObject({ kind: "unavailable", stage: "state" });
    expect(outcome("approval.expired")).toMatchObject({ kind: "unavailable", stage: "approval" });
    expect(outcome("email.queued")).toMatchObject({ kind: "executed", stage: "execute" });
  });

  it("only final outcomes and an unknown refund bind the call key", () => {
    expect(bindsCallKey(outcome("refund.issued"))).toBe(true);
    expect(bindsCallKey(outcome("approval.required"))).toBe(true);
    expect(bindsCallKey(outcome("schema.invalid"))).toBe(true);
    expect(bindsCallKey(outcome("refund.outcome-unknown"))).toBe(true);
    expect(bindsCallKey(outcome("upstream.outcome-unknown"))).toBe(true);
    expect(bindsCallKey(outcome("upstream.unreachable"))).toBe(false);
    expect(bindsCallKey(outcome("order.changed"))).toBe(false);
    expect(bindsCallKey(outcome("host.error"))).toBe(false);
    expect(bindsCallKey(outcome("refund.in-progress"))).toBe(false);
  });
});

describe("allowlist and scope", () => {
  it("finds registered tools by exact name and checks exposure", () => {
    expect(checkAllowlist("get_order", ["get_order"])).toEqual({ ok: true, value: read });
    expect(checkAllowlist("get_order", ["issue_refund"])).toMatchObject({
      ok: false,
      outcome: { code: "tool.not-available" },
    });
    expect(checkAllowlist("get_order ", ["get_order"])).toMatchObject({ ok: false, outcome: { code: "tool.unknown" } });
    expect(checkScope(refund, ["orders:read"])).toMatchObject({ ok: false, outcome: { code: "scope.missing" } });
    expect(checkScope(refund, ["refunds:write"])).toEqual({ ok: true, value: refund });
  });
});

describe("schema: normalization, host-owned fields, strict types, and what the error says", () => {
  const valid = { order_id: "ord_1001", amount_cents: 100, currency: "USD", reason: "late" };

  it("passes normalized arguments on", () => {
    expect(checkSchema(address, { order_id: " ord_1003 ", line1: " ５ Elm St\n", postal_code: "９４１０７" })).toEqual({
      ok: true,
      value: { args: { order_id: "ord_1003", line1: "5 Elm St", postal_code: "94107" }, semanticFailures: [] },
    });
  });

  it("names host-owned fields at any depth, and says why", () => {
    const result = checkSchema(refund, { ...valid, meta: { Tenant_Id: "t" } });
    expect(result).toMatchObject({
      ok: false,
      outcome: {
        code: "argument.host-owned",
        issues: [{ path: "meta.Tenant_Id", problem: "set by the host: leave it out" }],
      },
    });
    const listed = checkSchema(refund, { ...valid, list: [{ approval_id: 1 }] });
    expect(listed).toMatchObject({ ok: false, outcome: { issues: [{ path: "list[0].approval_id" }] } });
  });

  it("words a number's range without characters, and names the whole arguments or any other rule plainly", () => {
    // An upstream server's tool declares numbers, arrays and unions the built-in tools do not have.
    const counted: ToolFace = {
      name: "count_things",
      description: "Counts things",
      effect: "read",
      schema: z.strictObject({
        count: z.int().min(1).max(10),
        step: z.number().multipleOf(5),
        mode: z.union([z.literal("fast"), z.literal("slow")]),
      }),
      semanticCodes: { count: "amount.invalid" },
    };
    const problems = (args: unknown, tool: ToolFace = counted) => {
      const result = checkSchema(tool, args as Record<string, unknown>);
      return result.ok ? result.value.semanticFailures.map((failure) => failure.issue) : result.outcome.issues;
    };
    expect(problems({ count: 3, step: 7, mode: "fast" })).toEqual([
      { path: "step", problem: "must be a multiple of 5" },
    ]);
    expect(problems({ count: 3, step: 5, mode: "other" })).toEqual([{ path: "mode", problem: "is invalid" }]);
    const uncoded = { ...counted, semanticCodes: {} };
    expect(problems({ count: 0, step: 5, mode: "fast" }, uncoded)).toEqual([
      { path: "count", problem: "must be at least 1" },
    ]);
    expect(problems({ count: 11, step: 5, mode: "fast" }, uncoded)).toEqual([
      { path: "count", problem: "must be at most 10" },
    ]);
    // A field with a semantic code leaves its range to the semantic stage.
    expect(checkSchema(counted, { count: 0, step: 5, mode: "fast" })).toMatchObject({
      ok: true,
      value: { semanticFailures: [{ code: "amount.invalid" }] },
    });
    // A rule on the arguments as a whole (an upstream schema's `minProperties`, say) is named by "(arguments)".
    const either: ToolFace = {
      ...counted,
      schema: z.strictObject({ a: z.string().optional(), b: z.string().optional() }).refine((v) => v.a || v.b),
    };
    expect(problems({}, either)).toEqual([{ path: "(arguments)", problem: "is invalid" }]);
  });

  it("describes each problem by path and rule, never by value", () => {
    const problems = (args: Record<string, unknown>, tool = refund) => {
      const result = checkSchema(tool, args);
      return result.ok ? [] : result.outcome.issues;
    };
    expect(problems({ ...valid, amount_cents: "100" })).toEqual([
      { path: "amount_cents", problem: "must be a number, not a string" },
    ]);
    expect(problems({ ...valid, amount_cents: 1.5 })).toEqual([
      { path: "amount_cents", problem: "must be an integer, not a number with a fraction" },
    ]);
    expect(problems({ ...valid, extra: "SECRET" })).toEqual([
      { path: "extra", problem: "unknown field: leave it out" },
    ]);
    const { amount_cents: _omitted, ...missing } = valid;
    expect(problems(missing)).toEqual([{ path: "amount_cents", problem: "is required: a number" }]);
    const { reason: _unsaid, ...noReason } = valid;
    expect(problems(noReason)).toEqual([
      {
        path: "reason",
        problem: 'is required: one of "damaged", "not_as_described", "late", "not_delivered", "wrong_item", "other"',
      },
    ]);
    expect(problems({ order_id: "ord_1003", line1: "", postal_code: "94107" }, address)).toEqual([
      { path: "line1", problem: "must not be empty" },
      { path: "line1", problem: "must match the pattern ^[^\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}]+$" },
    ]);
    expect(problems({ order_id: "ord_1003", line1: "x".repeat(81), postal_code: "94107" }, address)).toEqual([
      { path: "line1", problem: "must be at most 80 characters" },
    ]);
    expect(problems({ ...valid, reason: 7 })).toEqual([
      {
        path: "reason",
        problem: 'must be one of "damaged", "not_as_described", "late", "not_delivered", "wrong_item", "other"',
      },
    ]);
    expect(problems({ order_id: "x".repeat(200) }, read)?.[0]?.path).toBe("order_id");
    expect(problems({ ["k".repeat(100)]: 1, order_id: "ord_1001" }, read)?.[0]?.path).toBe("k".repeat(64));
  });

  it("leaves range, format and enum failures of semantic fields to the semantic stage, in field order", () => {
    const result = checkSchema(refund, { ...valid, amount_cents: 0, currency: "usd" });
    expect(result).toEqual({
      ok: true,
      value: expect.objectContaining({
        semanticFailures: [
          { code: "amount.invalid", issue: { path: "amount_cents", problem: "must be at least 1" } },
          { code: "currency.invalid", issue: { path: "currency", problem: "must match the pattern ^[A-Z]{3}$" } },
        ],
      }),
    });
    if (!result.ok) throw new Error("unreachable");
    expect(checkSemantics(result.value)).toMatchObject({
      ok: false,
      outcome: {
        code: "amount.invalid",
        stage: "semantic",
        issues: [
          { path: "amount_cents", problem: "must be at least 1" },
          { path: "currency", problem: "must match the pattern ^[A-Z]{3}$" },
        ],
      },
    });
    const codes = (checked: ReturnType<typeof checkSchema>) =>
      checked.ok && checked.value.semanticFailures.map((failure) => failure.code);
    expect(codes(checkSchema(refund, { ...valid, amount_cents: 100001 }))).toEqual(["amount.invalid"]);
    expect(codes(checkSchema(refund, { ...valid, reason: "because" }))).toEqual(["reason.invalid"]);
    const clean = checkSchema(refund, valid);
    expect(clean.ok && checkSemantics(clean.value)).toEqual({ ok: true, value: valid });
  });
});

const order = (facts: Partial<OrderFacts> = {}): OrderFacts => ({
  id: "ord_1004",
  tenantId: "t",
  customerId: "c",
  customerEmail: "c@example.test",
  totalCents: 15000,
  refundedCents: 0,
  currency: "USD",
  status: "delivered",
  addressLine1: "1 Elm St",
  postalCode: "94107",
  fraudHold: false,
  refundPending: false,
  version: 1,
  ...facts,
});

describe("state rules, in the SPEC's order", () => {
  const args = { order_id: "ord_1004", amount_cents: 5000, currency: "USD", reason: "late" };
  it.each([
    [{ status: "processing" }, "order.not-delivered"],
    [{ currency: "EUR" }, "currency.mismatch"],
    [{ refundedCents: 10001 }, "amount.exceeds-refundable"],
    [{ refundPending: true }, "refund.in-progress"],
    [{ status: "processing", currency: "EUR" }, "order.not-delivered"],
    [{ currency: "EUR", refundPending: true }, "currency.mismatch"],
  ])("a refund on an order with %j is %s", (facts, code) => {
    expect(checkState(refund, args, order(facts))).toMatchObject({ ok: false, outcome: { code } });
  });
  it("allows exactly the refundable amount", () => {
    expect(checkState(refund, args, order({ refundedCents: 10000 })).ok).toBe(true);
    expect(checkState(address, { order_id: "ord_1004" }, order({ status: "processing" })).ok).toBe(true);
    expect(checkState(address, { order_id: "ord_1004" }, order({ status: "shipped" }))).toMatchObject({
      ok: false,
      outcome: { code: "order.already-shipped" },
    });
    expect(checkState(email, { order_id: "ord_1004" }, order({ status: "cancelled" })).ok).toBe(true);
  });
});

describe("consequence policy at its boundaries (auto 5000, cap 10000, 3 writes)", () => {
  const policy: TenantPolicy = {
    autoLimitCents: 5000,
    sessionCapCents: 10000,
    maxAutoWrites: 3,
    approvalTtlSeconds: 900,
    rateConversationPerMin: 60,
    rateKeyPerMin: 600,
    duplicateWindowHours: 24,
  };
  const budget = (writesMade: number, irreversibleCents: number) => ({ writesMade, irreversibleCents });
  it("irreversible: auto up to and including the limit and the cap", () => {
    expect(needsApproval(refund, budget(0, 0), policy, 5000)).toBe(false);
    expect(needsApproval(refund, budget(0, 0), policy, 5001)).toBe(true);
    expect(needsApproval(refund, budget(0, 5000), policy, 5000)).toBe(false);
    expect(needsApproval(refund, budget(0, 5001), policy, 5000)).toBe(true);
    expect(needsApproval(refund, budget(99, 0), policy, 1)).toBe(false);
    expect(needsApproval(email, budget(99, 10000), policy, 0)).toBe(false);
  });
  it("reversible: auto until the conversation has made max_auto_writes writes", () => {
    expect(needsApproval(address, budget(2, 0), policy, 0)).toBe(false);
    expect(needsApproval(address, budget(3, 0), policy, 0)).toBe(true);
  });
  it("reads never", () => {
    expect(needsApproval(read, budget(1000, 1_000_000), policy, 0)).toBe(false);
  });
  it("names every limit a held call passes, with the numbers the supervisor's card shows", () => {
    expect(heldBecause(address, budget(2, 0), policy, 0)).toEqual([]);
    expect(heldBecause(address, budget(3, 0), policy, 0)).toEqual([
      { rule: "max_auto_writes", limit: 3, writes_made: 3 },
    ]);
    expect(heldBecause(address, budget(4, 0), policy, 0)).toEqual([
      { rule: "max_auto_writes", limit: 3, writes_made: 4 },
    ]);
    // Writes count only against reversible tools; a refund is held by money alone.
    expect(heldBecause(refund, budget(99, 5000), policy, 5000)).toEqual([]);
    expect(heldBecause(refund, budget(0, 6000), policy, 5001)).toEqual([
      { rule: "auto_limit_cents", limit_cents: 5000, amount_cents: 5001 },
      { rule: "session_cap_cents", cap_cents: 10000, spent_cents: 6000, amount_cents: 5001 },
    ]);
    expect(heldBecause(email, budget(99, 10000), policy, 0)).toEqual([]);
    expect(heldBecause(read, budget(1000, 1_000_000), policy, 0)).toEqual([]);
  });
});
