import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startCluster } from "./pg-cluster";

// The seeded-defect check: a test suite that cannot fail proves nothing. Each entry below disables one check
// in a throwaway copy of the project and runs the test that guards it; this script fails unless that named
// test fails. When a guarded line is rewritten, its entry here must follow (the script says so).

interface Defect {
  name: string;
  file: string;
  find: string;
  replace: string;
  testFile: string;
  test: string;
}

const DEFECTS: Defect[] = [
  {
    name: "approval link single use",
    file: "lib/approvals/email-links/sql.ts",
    find: 'WHERE "id" = ${linkId} AND "usedAt" IS NULL AND',
    replace: 'WHERE "id" = ${linkId} AND',
    testFile: "tests/approvals/approval-links.integration.test.ts",
    test: "a mail scanner opening the link twice decides nothing; the supervisor's one post executes once; a second post is refused",
  },
  {
    name: "approval link recipient",
    file: "lib/approvals/email-links/open.ts",
    find: 'if (link.recipientId !== userId) return "link.other-recipient";',
    replace: "",
    testFile: "tests/approvals/approval-links.integration.test.ts",
    test: "refuses an expired link, another person's link, another tenant's and a made-up token, and changes nothing",
  },
  {
    name: "ownership",
    file: "lib/gateway/sql.ts",
    find: 'WHERE o."id" = ${at.orderId} AND o."tenantId" = ${at.tenantId} AND o."customerId" = ${at.customerId}`;',
    replace: 'WHERE o."id" = ${at.orderId}`;',
    testFile: "tests/gateway/authorization.integration.test.ts",
    test: "non-owners of an order always get the bytes of a missing order, with no effect",
  },
  {
    name: "bound order",
    file: "lib/gateway/context.ts",
    find: "if (conversation.orderId !== null && conversation.orderId !== orderId)",
    replace: "if (false)",
    testFile: "tests/gateway/authorization.integration.test.ts",
    test: "a conversation bound to one order cannot reach the customer's other orders",
  },
  {
    name: "scope",
    file: "lib/gateway/scope.ts",
    find: 'return held.includes(tool.scope) ? pass(tool) : stop("scope.missing");',
    replace: "return pass(tool);",
    testFile: "tests/gateway/refusals.integration.test.ts",
    test: "scope.missing: an agent without the refund permission",
  },
  {
    name: "host-owned fields",
    file: "lib/gateway/schema.ts",
    find: "if (hostOwned.length > 0) {",
    replace: "if (false) {",
    testFile: "tests/gateway/refusals.integration.test.ts",
    test: "argument.host-owned: refused by name in any casing or separator",
  },
  {
    name: "session cap",
    file: "lib/gateway/policy.ts",
    find: " || conversation.irreversibleCents + impactCents > policy.sessionCapCents",
    replace: "",
    testFile: "tests/gateway/policy.integration.test.ts",
    test: "three 4000-cent refunds on ord_1004: two execute, the third crosses the session cap and waits",
  },
  {
    name: "exposure ceiling",
    file: "lib/gateway/sql.ts",
    find: '- ${agentEdge(tenantId, agentId)} <= (SELECT "agent" FROM ceilings)',
    replace: '- ${agentEdge(tenantId, agentId)} <= (SELECT "agent" FROM ceilings) + 1000000',
    testFile: "tests/gateway/exposure.integration.test.ts",
    test: "an agent's refunds across conversations stop at the agent ceiling: the next waits, and its preview names the ceiling",
  },
  {
    name: "exposure reservation",
    file: "lib/gateway/sql.ts",
    find: 'WHERE x."runningCents" + EXCLUDED."runningCents" - ${tenantEdge(tenantId)} <= (SELECT "tenant" FROM ceilings)',
    replace: "WHERE true",
    testFile: "tests/gateway/exposure.integration.test.ts",
    test: "16 refunds of one tenant at once against a ceiling only 5 fit under: exactly 5 execute, the rest wait for a person",
  },
  {
    name: "exposure released",
    file: "lib/gateway/ceilings.ts",
    find: "if (reserved) await releaseExposure(",
    replace: "if (!reserved) await releaseExposure(",
    testFile: "tests/gateway/exposure.integration.test.ts",
    test: "an agent's refunds across conversations stop at the agent ceiling: the next waits, and its preview names the ceiling",
  },
  {
    name: "exposure edge",
    file: "lib/gateway/sql.ts",
    find: `WHERE e."tenantId" = \${tenantId} AND e."agentId" = \${agentId} AND e."createdAt" <= now() - interval '24 hours'`,
    replace: `WHERE e."tenantId" = \${tenantId} AND e."agentId" = \${agentId} AND e."createdAt" <= now() - interval '25 hours'`,
    testFile: "tests/gateway/exposure.integration.test.ts",
    test: "the window is exact at its edge: a refund made just over 24 hours ago no longer counts, one just under does",
  },
  {
    name: "rules' facts under the reservation",
    file: "lib/gateway/pipeline.ts",
    find: "if (ceilings?.ok && rules && readsMovingFacts(rules)) {",
    replace: "if (false) {",
    testFile: "tests/policy-rules/rules-route.integration.test.ts",
    test: "8 parallel refunds by one agent in 8 conversations, a rule holding the second of the day: exactly 1 runs on its own",
  },
  {
    name: "conversation opens",
    file: "lib/gateway/rate.ts",
    find: "return row && row.count > row.limit ?",
    replace: "return row && false ?",
    testFile: "tests/gateway/exposure.integration.test.ts",
    test: "past rateOpenPerMin a key gets 429 rate.limited with Retry-After and no conversation; another key is unaffected",
  },
  {
    name: "seal horizon",
    file: "lib/audit/sql.ts",
    find: 'pg_snapshot_xmin(pg_current_snapshot())::text AS "horizon"',
    replace: 'pg_snapshot_xmax(pg_current_snapshot())::text AS "horizon"',
    testFile: "tests/audit/audit.integration.test.ts",
    test: "a row whose transaction commits after later rows is sealed late, never skipped",
  },
  {
    name: "sealed row hash",
    file: "lib/audit/seal.ts",
    find: "if (hash !== seal.rowHashes[index]) {",
    replace: "if (false) {",
    testFile: "tests/audit/audit.integration.test.ts",
    test: "names a row altered with SQL after it was sealed",
  },
  {
    name: "seal key",
    file: "lib/audit/keys.ts",
    find: 'createHmac("sha256", key.secret)',
    replace: 'createHmac("sha256", "")',
    testFile: "tests/audit/audit-insider.integration.test.ts",
    test: "re-computing the chain with SQL and the code but without the key fails verification",
  },
  {
    name: "unkeyed seal",
    file: "lib/audit/seal.ts",
    find: "if (previous?.keyId || !allowUnkeyed)",
    replace: "if (previous?.keyId)",
    testFile: "tests/audit/audit-insider.integration.test.ts",
    test: "re-computing the chain with SQL and the code but without the key fails verification",
  },
  {
    name: "kept head",
    file: "lib/audit/seal.ts",
    find: "const problem = headProblem(seals, kept);",
    replace: "const problem = null;",
    testFile: "tests/audit/audit-insider.integration.test.ts",
    test: "deleting the last rows and their seals passes a check without the kept head and fails against it",
  },
  {
    name: "republished head",
    file: "lib/audit/heads.ts",
    find: "if (first && first.hash !== head.hash)",
    replace: "if (false)",
    testFile: "tests/audit/audit-insider.integration.test.ts",
    test: "deleting the last rows and their seals passes a check without the kept head and fails against it",
  },
  {
    name: "signed head",
    file: "lib/audit/heads.ts",
    find: "if (sign(unsigned, key) !== sig) {",
    replace: "if (false) {",
    testFile: "tests/audit/audit-insider.integration.test.ts",
    test: "an edited head file is refused",
  },
  {
    name: "audit log sealed",
    file: "lib/audit/sql.ts",
    find: 'export const SEALED_LOGS: readonly SealedLog[] = ["decision", "audit"];',
    replace: 'export const SEALED_LOGS: readonly SealedLog[] = ["decision"];',
    testFile: "tests/audit/audit-insider.integration.test.ts",
    test: "as a superuser with the triggers off, rewrites the amount an admin set: audit:verify names the row",
  },
  {
    name: "backdated row",
    file: "lib/audit/seal.ts",
    find: "if (previous && row.createdAt.getTime() < previous.sealedAt.getTime() - BACKDATE_SLACK_MS)",
    replace: "if (false)",
    testFile: "tests/audit/audit-insider.integration.test.ts",
    test: "a row inserted with an old createdAt takes its insert's time and place; with the triggers off it is named backdated",
  },
  {
    name: "seal key required",
    file: "lib/instance/jobs.ts",
    find: "if (!env().AUDIT_SEAL_KEY) return",
    replace: "if (false) return",
    testFile: "tests/ops/health.integration.test.ts",
    test: "names the jobs when they should run and do not: before they start and once they are stopped",
  },
  {
    name: "app role grants",
    file: "lib/migrate.ts",
    find: `'REVOKE UPDATE, DELETE, TRUNCATE ON "DecisionLog", "AuditLog", "DecisionSeal" FROM {role}',`,
    replace: '"SELECT 1",',
    testFile: "tests/audit/audit-insider.integration.test.ts",
    test: "as the app's role, cannot UPDATE, DELETE or TRUNCATE the logs or their seals, nor turn the triggers off",
  },
  {
    name: "idempotency",
    file: "lib/gateway/idempotency.ts",
    find: "if (!stored) return pass({ replay: null });",
    replace: "if (stored || !stored) return pass({ replay: null });",
    testFile: "tests/gateway/idempotency.integration.test.ts",
    test: "same key, same arguments: the stored outcome, marked replayed, and the effect once",
  },
  {
    name: "permission re-read",
    file: "lib/gateway/policy.ts",
    find: "if (!agent || !scopesFor(agent).includes(tool.scope))",
    replace: "if (!agent)",
    testFile: "tests/gateway/refusals.integration.test.ts",
    test: "agent.not-authorized: a permission revoked while the conversation is open",
  },
  {
    name: "fraud hold",
    file: "lib/gateway/policy.ts",
    find: 'if (tool.effect !== "read" && order.fraudHold) return stop("order.fraud-hold");',
    replace: "",
    testFile: "tests/gateway/refusals.integration.test.ts",
    test: "order.fraud-hold: denied, and the model is not told why",
  },
  {
    name: "order version",
    file: "lib/tools/sql.ts",
    find: 'WHERE "id" = ${order.id} AND "version" = ${order.version}\n',
    replace: 'WHERE "id" = ${order.id}\n',
    testFile: "tests/stress/concurrency.integration.test.ts",
    test: "a write conditional on a version the order has moved past gives order.changed and changes nothing",
  },
  {
    name: "refund with its move",
    file: "lib/payments/sql.ts",
    find: "'reserved', ${refund.providerKey}\n    FROM moved`;",
    replace: "'reserved', ${refund.providerKey}`;",
    testFile: "tests/stress/concurrency.integration.test.ts",
    test: "a write conditional on a version the order has moved past gives order.changed and changes nothing",
  },
  {
    name: "settle once",
    file: "lib/payments/sql.ts",
    find: `WHERE "toolCallId" = \${callId} AND "status" = 'reserved'`,
    replace: `WHERE "toolCallId" = \${callId}`,
    testFile: "tests/payments/settle-once.integration.test.ts",
    test: "completing a settled refund again changes nothing: one refund, one settle in the log, the order as it was",
  },
  {
    name: "refund reservation",
    file: "lib/tools/issue-refund.ts",
    find: "orderChanges: (args) => ({ refundedCentsIncrement: args.amount_cents, refundPending: true }),",
    replace: "orderChanges: (args) => ({ refundedCentsIncrement: args.amount_cents }),",
    testFile: "tests/payments/provider-faults.integration.test.ts",
    test: "timeout after acting: unknown (never executed, never failed), then reconcile finds it issued, one provider refund",
  },
  {
    name: "duplicate keys",
    file: "lib/gateway/parse.ts",
    find: 'if (seen.has(key)) throw new ParseFailure("parse.duplicate-key");',
    replace: "",
    testFile: "tests/gateway/refusals.integration.test.ts",
    test: "parse.duplicate-key: at the top and inside arguments, even when escaped differently",
  },
  {
    name: "provider signature",
    file: "lib/payments/provider.ts",
    find: '  if (!answer.signed) return { kind: "uncertain", reason: `unsigned answer ${answer.status}, not the provider\'s` };\n  const { status, body } = answer;\n  if (status >= 200',
    replace: "  const { status, body } = answer;\n  if (status >= 200",
    testFile: "tests/payments/provider-client.test.ts",
    test: "an answer that is not the provider's own is uncertain, whatever its status: not JSON, unsigned, badly signed, or about another key",
  },
  {
    name: "refusal after uncertainty",
    file: "lib/payments/provider.ts",
    find: "return uncertainBefore",
    replace: "return false",
    testFile: "tests/payments/provider-client.test.ts",
    test: "a signed refusal for this key is definite, but not after an attempt under the same key was uncertain",
  },
  {
    name: "reconcile probe",
    file: "lib/payments/reconcile.ts",
    find: "  if (!probe.ok) {",
    replace: "  if (false) {",
    testFile: "tests/payments/money-once.integration.test.ts",
    test: "with a wrong base path, a pass does nothing, says why, and a correct pass afterwards settles every refund once",
  },
  {
    name: "structured not-found",
    file: "lib/payments/provider.ts",
    find: 'if (status === 404 && error.type === "resource_missing" && error.idempotency_key === key)',
    replace: "if (status === 404)",
    testFile: "tests/payments/money-once.integration.test.ts",
    test: "with a wrong base path, a pass does nothing, says why, and a correct pass afterwards settles every refund once",
  },
  {
    name: "re-send window",
    file: "lib/payments/reconcile.ts",
    find: "if (now.getTime() - refund.createdAt.getTime() >= resendWindowMs) {",
    replace: "if (false) {",
    testFile: "tests/payments/money-once.integration.test.ts",
    test: "past the provider's key retention nothing is re-sent: the refund goes to investigation and the order shows why it is blocked",
  },
  {
    name: "re-send re-check",
    file: "lib/payments/reconcile.ts",
    find: "    if (refusal)\n",
    replace: "    if (false)\n",
    testFile: "tests/payments/money-once.integration.test.ts",
    test: "after a fraud hold, a never-seen refund is released, not re-sent, and the call says why",
  },
  {
    name: "reconciler lease",
    file: "lib/payments/sql.ts",
    find: `SET "nextCheckAt" = now() + \${options.leaseMs}::int * interval '1 millisecond', "checks"`,
    replace: 'SET "nextCheckAt" = now(), "checks"',
    testFile: "tests/payments/money-once.integration.test.ts",
    test: "two reconcilers in this process and a third from the command line race over the same refunds: zero duplicate provider requests",
  },
  {
    name: "pending confirmation",
    file: "lib/outcome.ts",
    find: '      if (o.code === "refund.outcome-unknown") return { status: "pending_confirmation" };\n',
    replace: "",
    testFile: "tests/gateway/stages.test.ts",
    test: 'refund.outcome-unknown is shown to the model as {"status":"pending_confirmation"}',
  },
  {
    name: "settled refusal after uncertainty",
    file: "lib/payments/refunds.ts",
    find: 'if (answer.kind === "refused" && refund.status !== "reserved")',
    replace: "if (false)",
    testFile: "tests/payments/money-once.integration.test.ts",
    test: "a refusal of a re-send, after attempts whose outcome was unknown, releases nothing until a lookup finds the provider's stored decline",
  },
  {
    name: "investigation tenant",
    file: "lib/payments/investigations.ts",
    find: "{ id: input.refundId, tenantId: supervisor.tenantId }",
    replace: "{ id: input.refundId }",
    testFile: "tests/payments/investigations.integration.test.ts",
    test: "only a supervisor of the refund's tenant decides, once; a refused decision changes nothing",
  },
  {
    name: "metrics token",
    file: "app/api/metrics/route.ts",
    find: "return given.length === expected.length && timingSafeEqual(given, expected);",
    replace: "return true;",
    testFile: "tests/ops/metrics.integration.test.ts",
    test: "wants the bearer token when METRICS_TOKEN is set",
  },
  {
    name: "readiness migrations",
    file: "lib/instance/health.ts",
    find: 'if (pending.length) checks.migrations = `${pending.length} not applied: ${pending.join(", ")}`;',
    replace: "",
    testFile: "tests/ops/health.integration.test.ts",
    test: "names the migrations when one in the build is not applied, with its name",
  },
  {
    name: "log masking",
    file: "lib/log.ts",
    find: "SECRETS.reduce((masked, [pattern, replacement]) => masked.replace(pattern, replacement), text)",
    replace: "text",
    testFile: "tests/ops/logs.integration.test.ts",
    test: "masks anything shaped like a key, a bearer credential or a password",
  },
  {
    name: "storable strings",
    file: "lib/gateway/parse.ts",
    find: 'if (!isStorableText(value)) throw new ParseFailure("parse.malformed");',
    replace: "",
    testFile: "tests/agent-api/hostile-input.integration.test.ts",
    test: "names the failure: a NUL in a body id is request.invalid, in an envelope parse.malformed",
  },
  {
    name: "well-formed ids",
    file: "lib/conversations/open.ts",
    find: "  customer_id: IdSchema,",
    replace: "  customer_id: z.string().min(1).max(100),",
    testFile: "tests/agent-api/hostile-input.integration.test.ts",
    test: "answer 4xx (or a recorded refusal), log nothing and change nothing",
  },
  {
    name: "step-up",
    file: "lib/approvals/decision/approve.ts",
    find: "if (needsStepUp && !stepUp) {",
    replace: "if (false) {",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "above the threshold an approval consumes a proof made in this session for this request at this amount; the decision records how",
  },
  {
    name: "step-up session",
    file: "lib/auth/sql.ts",
    find: 'AND "sessionId" = ${use.sessionId}',
    replace: "",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "above the threshold an approval consumes a proof made in this session for this request at this amount; the decision records how",
  },
  {
    name: "step-up purpose item",
    file: "lib/auth/sql.ts",
    find: 'AND ${use.item} = ANY("items")',
    replace: "",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "above the threshold an approval consumes a proof made in this session for this request at this amount; the decision records how",
  },
  {
    name: "step-up expiry",
    file: "lib/auth/sql.ts",
    find: 'AND "expiresAt" > now()\n',
    replace: "\n",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "above the threshold an approval consumes a proof made in this session for this request at this amount; the decision records how",
  },
  {
    name: "step-up kind",
    file: "lib/auth/sql.ts",
    find: 'AND "kind" = ${use.kind}',
    replace: "",
    testFile: "tests/auth/step-up.integration.test.ts",
    test: "the same proof cannot create a second key; a proof for one agent, or for another kind of change, creates no key",
  },
  {
    name: "step-up single use",
    file: "lib/auth/sql.ts",
    find: 'AND NOT (${use.item} = ANY(coalesce("usedFor", ARRAY[]::text[])))',
    replace: "",
    testFile: "tests/auth/step-up.integration.test.ts",
    test: "the same proof cannot create a second key; a proof for one agent, or for another kind of change, creates no key",
  },
  {
    name: "passkey enrol proof",
    file: "lib/auth/step-up/passkeys.ts",
    find: 'if (!(await hasStepUpItem(db, { userId: person.id, sessionId, proofId, kind: ENROL.kind, item: "enrol" })))',
    replace: "if (false)",
    testFile: "tests/auth/step-up.integration.test.ts",
    test: "registration options are refused without an enrolment proof from this session, and given with one",
  },
  {
    name: "passkey removal proof",
    file: "lib/auth/step-up/passkeys.ts",
    find: 'const method = await consumeStepUpFor(tx, holder, { kind: "passkey.remove", passkeyId });',
    replace: 'const method = "password" as const;',
    testFile: "tests/auth/step-up.integration.test.ts",
    test: "removing one's own passkey consumes a proof for that passkey, is audited and emails the owner; without one nothing changes",
  },
  {
    name: "admin passkey removal proof",
    file: "lib/auth/step-up/passkeys.ts",
    find: 'const method = await consumeStepUpFor(tx, holder, { kind: "admin.passkeys-removed", userId });',
    replace: 'const method = "password" as const;',
    testFile: "tests/auth/step-up.integration.test.ts",
    test: "an admin removes a person's passkeys only with the admin's own proof for that person; audited, the owner emailed",
  },
  {
    name: "policy loosening proof",
    file: "lib/admin/policy/numbers.ts",
    find: "if (loosens.length > 0 && !stepUp) return",
    replace: "if (false) return",
    testFile: "tests/admin/admin-desk.integration.test.ts",
    test: "raising a limit or threshold without a proof for exactly this form changes nothing; lowering needs none",
  },
  {
    name: "policy loosened fields",
    file: "lib/admin/changes/loosening.ts",
    find: 'return classification === "loosening" || classification === "needs-second-admin";',
    replace: "return false;",
    testFile: "tests/admin/admin-desk.integration.test.ts",
    test: "raising a limit or threshold without a proof for exactly this form changes nothing; lowering needs none",
  },
  {
    name: "connection idle lifetime raise",
    file: "lib/admin/changes/loosening.ts",
    find: 'oauthRefreshIdleDays: "up",',
    replace: 'oauthRefreshIdleDays: "never",',
    testFile: "tests/oauth/oauth-connections.integration.test.ts",
    test: "raising a lifetime needs the admin's step-up and then a second admin; until approved connections lapse as before",
  },
  {
    name: "refund grant proof",
    file: "lib/admin/access/refund-permission.ts",
    find: 'if (!stepUp) return "step-up-required";',
    replace: "",
    testFile: "tests/admin/admin-desk.integration.test.ts",
    test: "withdrawn, the agent's next refund in an open conversation is denied; granted again (by two admins), it executes; each change audited once",
  },
  {
    name: "key creation proof",
    file: "lib/admin/access/agent-keys.ts",
    find: 'if (!stepUp) return { ok: false as const, problem: "step-up-required" as const };',
    replace: "",
    testFile: "tests/auth/step-up.integration.test.ts",
    test: "the same proof cannot create a second key; a proof for one agent, or for another kind of change, creates no key",
  },
  {
    name: "release proof",
    file: "lib/payments/investigations.ts",
    find: 'if (input.resolution === "released" && !stepUp) {',
    replace: "if (false) {",
    testFile: "tests/payments/investigations.integration.test.ts",
    test: "closed as released with a note: the reservation is given back, the order refundable again, the call says so; provider = books",
  },
  {
    name: "narrowing only",
    file: "lib/approvals/decision/binding.ts",
    find: "after > before",
    replace: "false",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "refuses a raise, another order, another tool, another currency or reason, executing nothing and leaving the request pending",
  },
  {
    name: "two different approvers",
    file: "lib/approvals/decision/approve.ts",
    find: "if (twoPerson && request.firstApproverId === approver.userId) {",
    replace: "if (false) {",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "records the first approval as partial, refuses the same person and the requester, and executes on a second supervisor",
  },
  {
    name: "two-admin: loosening above the bound waits",
    file: "lib/admin/changes/loosening.ts",
    find: 'return spec.unit !== "money" || change.after > change.bound ? "needs-second-admin" : "loosening";',
    replace: 'return "loosening";',
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "a lone admin raising the per-call limit to 10,000,000 cents: the change waits, refunds above the old limit still need approval, every supervisor is told",
  },
  {
    name: "two-admin: the webhook waits",
    file: "lib/admin/changes/loosening.ts",
    find: 'case "webhook.set":\n      return "needs-second-admin";',
    replace: 'case "webhook.set":\n      return "loosening";',
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "setting the webhook without a proof for that URL changes nothing; with one, a lone admin's webhook waits for the delay, and applies only then",
  },
  {
    name: "webhook proof",
    file: "lib/admin/policy/webhook.ts",
    find: "if (!stepUp)",
    replace: "if (false)",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "setting the webhook without a proof for that URL changes nothing; with one, a lone admin's webhook waits for the delay, and applies only then",
  },
  {
    name: "two-admin: the webhook as proposed",
    file: "lib/admin/changes/two-admin.ts",
    find: 'if (storedWebhook(await lockTenantWebhook(tx, row.tenantId)) !== row.base.stored) return "stale";',
    replace: "",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "with a second admin, a new webhook waits for their approval: not the proposer's, and it goes stale if the webhook changed meanwhile",
  },
  {
    name: "two-admin: self-registered clients wait",
    file: "lib/admin/changes/loosening.ts",
    find: 'return change.enabled ? "needs-second-admin" : "tightening";',
    replace: 'return change.enabled ? "loosening" : "tightening";',
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "allowing self-registered clients without a proof changes nothing; with one it waits for a second admin (or a lone admin's delay, which a supervisor cancels); refusing them applies at once",
  },
  {
    name: "self-registration proof",
    file: "lib/admin/access/self-registration.ts",
    find: 'if (classification !== "tightening" && !stepUp) return "step-up-required";',
    replace: "",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "allowing self-registered clients without a proof changes nothing; with one it waits for a second admin (or a lone admin's delay, which a supervisor cancels); refusing them applies at once",
  },
  {
    name: "two-admin: not the proposer",
    file: "lib/admin/changes/two-admin.ts",
    find: "if (row.proposedById === admin.id)",
    replace: "if (false)",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "the proposer approving their own change is refused, as is a digest other than the one shown; nothing applies",
  },
  {
    name: "two-admin: the digest shown",
    file: "lib/admin/changes/two-admin.ts",
    find: "if (row.digest !== digest)",
    replace: "if (false)",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "a second admin approves the exact change once, with a step-up made for it: it applies, and approving it again is refused",
  },
  {
    name: "two-admin: approver's step-up",
    file: "lib/admin/changes/two-admin.ts",
    find: "if (!stepUp)",
    replace: "if (false)",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "a second admin approves the exact change once, with a step-up made for it: it applies, and approving it again is refused",
  },
  {
    name: "two-admin: single use",
    file: "lib/admin/changes/two-admin.ts",
    find: 'if (row.status !== "pending")',
    replace: "if (false)",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "a second admin approves the exact change once, with a step-up made for it: it applies, and approving it again is refused",
  },
  {
    name: "two-admin: base unchanged",
    file: "lib/admin/changes/two-admin.ts",
    find: 'if (canonicalJson(current) !== canonicalJson(row.base)) return "stale";',
    replace: "",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "a second admin approving a change whose base state changed since is refused, and it never applies",
  },
  {
    name: "two-admin: expiry",
    file: "lib/admin/changes/two-admin.ts",
    find: "if (row.expiresAt.getTime() <= Date.now()) {",
    replace: "if (false) {",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "an expired change cannot be approved",
  },
  {
    name: "two-admin: cancelled never applies",
    file: "lib/admin/sql.ts",
    find: 'WHERE "status" = \'pending\' AND "mode" = \'delay\' AND "applyAt" <= now()',
    replace: 'WHERE "mode" = \'delay\' AND "applyAt" <= now()',
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "a delayed change cancelled by a supervisor never applies; one nobody cancels applies when its delay has passed",
  },
  {
    name: "two-admin: refund grant waits",
    file: "lib/admin/changes/loosening.ts",
    find: 'return change.canRefund ? "needs-second-admin" : "tightening";',
    replace: 'return change.canRefund ? "loosening" : "tightening";',
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "granting refunds and minting a key for an agent who may refund wait for a second admin; the key works only once approved",
  },
  {
    name: "two-admin: held key unusable",
    file: "lib/auth/sql.ts",
    find: 'AND k."pendingChangeId" IS NULL',
    replace: "",
    testFile: "tests/admin/admin-changes.integration.test.ts",
    test: "granting refunds and minting a key for an agent who may refund wait for a second admin; the key works only once approved",
  },
  {
    name: "duplicate-intent guard",
    file: "lib/gateway/policy.ts",
    find: 'const held = checked.value === "approval" || duplicate?.verdict === "held";',
    replace: 'const held = checked.value === "approval";',
    testFile: "tests/gateway/duplicate-intent.integration.test.ts",
    test: "lost answer, re-proposal while settling, re-proposal with a fresh key: one refund, the second held; approving pays it",
  },
  {
    name: "duplicate guard: another conversation's refund",
    file: "lib/gateway/policy.ts",
    find: "effects.find((effect) => effect.conversationId !== conversation.id);",
    replace: "undefined;",
    testFile: "tests/gateway/duplicate-intent.integration.test.ts",
    test: "refused as more than the order has refundable (the review's sequence)",
  },
  {
    name: "duplicate re-checked at approval",
    file: "lib/approvals/decision/approve.ts",
    find: "if (duplicate && request.shownDuplicates.length === 0) {",
    replace: "if (false) {",
    testFile: "tests/gateway/duplicate-intent.integration.test.ts",
    test: "at approval, a duplicate issued after the request was made stops the click once and joins the card; the next approval pays it",
  },
  {
    name: "refund in progress names the call to wait on",
    file: "lib/outcome.ts",
    find: 'if (o.code === "refund.in-progress") return awaitingProjection(o.awaiting);',
    replace: "",
    testFile: "tests/gateway/duplicate-intent.integration.test.ts",
    test: "lost answer, re-proposal while settling, re-proposal with a fresh key: one refund, the second held; approving pays it",
  },
  {
    name: "webhook save ssrf",
    file: "lib/admin/policy/webhook.ts",
    find: "await checkOutboundUrl(input.url, { signed: true });",
    replace: "",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses to save a webhook at loopback, private, link-local, metadata or a name resolving to loopback, storing nothing",
  },
  {
    name: "outbound resolved check",
    file: "lib/security/outbound.ts",
    find: "for (const answer of answers) refuseUnlessAllowed(answer.address, host, allowed);",
    replace: "",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses a send whose name now resolves to loopback (DNS rebinding) and records why, reaching nothing",
  },
  {
    name: "outbound literal check",
    file: "lib/security/outbound.ts",
    find: "if (isIP(hostAddress)) await resolveChecked(url);",
    replace: "",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses a send to a loopback address written straight into the database, past the save check",
  },
  {
    name: "outbound metadata",
    file: "lib/security/outbound.ts",
    find: 'if (kind === "public" || (kind === "internal" && allowed)) return;',
    replace: 'if (kind === "public" || allowed) return;',
    testFile: "tests/security/outbound.integration.test.ts",
    test: "lets the operator allow a listed host, but never a metadata address, and says so when a name does not resolve",
  },
  {
    name: "outbound translated ipv6",
    file: "lib/security/outbound.ts",
    find: "if (address instanceof ipaddr.IPv6 && within(address, TRANSLATED))",
    replace: "if (false)",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses IPv6 forms that reach IPv4 (compatible, SIIT, 6to4, Teredo, NAT64, site-local), as literals and as DNS answers, for webhooks and metadata documents",
  },
  {
    name: "outbound transition ipv6",
    file: "lib/security/outbound.ts",
    find: "if (within(address, TRANSITION))",
    replace: "if (false)",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses IPv6 forms that reach IPv4 (compatible, SIIT, 6to4, Teredo, NAT64, site-local), as literals and as DNS answers, for webhooks and metadata documents",
  },
  {
    name: "webhook plain http",
    file: "lib/security/outbound.ts",
    find: 'if (signed && url.protocol === "http:" && env().NODE_ENV === "production")',
    replace: "if (false)",
    testFile: "tests/security/outbound.integration.test.ts",
    test: "refuses a plain http webhook in production, when saved and again when sent, and keeps https",
  },
  {
    name: "sign-in repeated field",
    file: "lib/auth/sign-in/route.ts",
    find: 'if (repeated) return errorResponse(400, "request.repeated-field", `send the field "${repeated}" once`);',
    replace: "",
    testFile: "tests/auth/sign-in-form.integration.test.ts",
    test: "refuses a repeated field before anything is counted or checked",
  },
  {
    name: "sign-in form type",
    file: "lib/auth/sign-in/route.ts",
    find: 'if (!FORM_TYPE.test(request.headers.get("content-type") ?? "")) {',
    replace:
      'if (request.headers.get("content-type")?.split(";")[0].trim().toLowerCase() !== "application/x-www-form-urlencoded") {',
    testFile: "tests/auth/sign-in-form.integration.test.ts",
    test: "refuses any content type but a plain form, however it mentions one",
  },
  {
    name: "sign-in decoded route",
    file: "lib/auth/sign-in/route.ts",
    find: 'if (segments[0] === "callback") return throttledSignIn(forwarded, context, form);',
    replace:
      'if (new URL(request.url).pathname.endsWith("/callback/credentials")) return throttledSignIn(forwarded, context, form);',
    testFile: "tests/auth/sign-in-form.integration.test.ts",
    test: "throttles the credentials callback however its path is encoded, and refuses a segment next-auth cannot mean",
  },
  {
    name: "sign-in form size",
    file: "lib/auth/sign-in/route.ts",
    find: "if (body.truncated) {",
    replace: "if (false) {",
    testFile: "tests/auth/sign-in-form.integration.test.ts",
    test: "refuses a form larger than a sign-in needs with 413",
  },
  {
    name: "step-up budget apart from sign-in",
    file: "lib/auth/step-up/step-up.ts",
    find: "const keys = inSessionKeys({ userId: person.id, sessionId });",
    replace:
      'const keys = [["account", `account:${person.email}`], ["address", `address:step-up:${person.id}`]] as const;',
    testFile: "tests/auth/step-up-throttle.integration.test.ts",
    test: "a stranger failing sign-ins to a supervisor's email locks the sign-in, even to the right password, but not the supervisor's step-up: the large approval goes through",
  },
  {
    name: "step-up throttled",
    file: "lib/auth/step-up/step-up.ts",
    find: 'if (!attempt.allowed) return { kind: "throttled", retryAfterSeconds: attempt.retryAfterSeconds };',
    replace: "",
    testFile: "tests/auth/step-up-throttle.integration.test.ts",
    test: "wrong step-up passwords are throttled in the session and for the person, never on the sign-in's account key",
  },
  {
    name: "metrics loopback only",
    file: "app/api/metrics/route.ts",
    find: 'if (!token) return NODE_ENV !== "production" && LOOPBACK.test(clientAddress(request.headers));',
    replace: "if (!token) return true;",
    testFile: "tests/ops/metrics.integration.test.ts",
    test: "outside production without METRICS_TOKEN answers loopback only",
  },
  {
    name: "public address required at start",
    file: "lib/env.ts",
    find: "if (!settings.NEXTAUTH_URL)",
    replace: "if (false)",
    testFile: "tests/ops/env.test.ts",
    test: "refuses a production start without NEXTAUTH_URL, naming it: the issuer would come from the Host header",
  },
  {
    name: "discovery from Host not cached",
    file: "lib/oauth/metadata.ts",
    find: 'issuerConfigured() ? "public, max-age=300" : "no-store"',
    replace: '"public, max-age=300"',
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "an issuer taken from the Host header (no NEXTAUTH_URL or OAUTH_ISSUER, development) is never cacheable; a configured one is",
  },
  {
    name: "metrics token required",
    file: "lib/env.ts",
    find: "if (!settings.METRICS_TOKEN)",
    replace: "if (false)",
    testFile: "tests/ops/env.test.ts",
    test: "refuses a production start without METRICS_TOKEN, or with a short one, and asks nothing of development",
  },
  {
    name: "seal key required at start",
    file: "lib/env.ts",
    find: "if (!settings.AUDIT_SEAL_KEY)",
    replace: "if (false)",
    testFile: "tests/ops/env.test.ts",
    test: "refuses a production start without AUDIT_SEAL_KEY; a key that is not 32 bytes stops any start",
  },
  {
    name: "seal key shape",
    file: "lib/env.ts",
    find: "(text) => keyBytes(text).length === 32,",
    replace: "(text) => keyBytes(text).length > 0,",
    testFile: "tests/ops/env.test.ts",
    test: "refuses a production start without AUDIT_SEAL_KEY; a key that is not 32 bytes stops any start",
  },
  {
    name: "ready hides driver error",
    file: "lib/instance/health.ts",
    find: 'checks.database = "database unreachable";',
    replace: "checks.database = `unreachable: ${message(error)}`;",
    testFile: "tests/ops/health.integration.test.ts",
    test: "names the database when it cannot be reached, and nothing of the driver's error",
  },
  {
    name: "queue stream session",
    file: "lib/instance/event-stream.ts",
    find: "const poll = async () => ((await options.stillLive()) ? feed.poll() : cleanup());",
    replace: "const poll = async () => feed.poll();",
    testFile: "tests/conversations/live-session.integration.test.ts",
    test: "closes the supervisors' queue stream within its poll once the person signs out",
  },
  {
    name: "conversation stream session",
    file: "lib/instance/event-stream.ts",
    find: "const poll = async () => ((await options.stillLive()) ? feed.poll() : cleanup());",
    replace: "const poll = async () => feed.poll();",
    testFile: "tests/conversations/live-session.integration.test.ts",
    test: "closes an agent's conversation stream within its poll once an admin ends the session",
  },
  {
    name: "browser open rate",
    file: "lib/conversations/actions.ts",
    find: "const rate = await countConversationOpen(db, { userId: user.id, tenantId: user.tenantId });",
    replace: "const rate = { ok: true, retryAfterSeconds: 0 };",
    testFile: "tests/conversations/conversation-open.integration.test.ts",
    test: "holds the browser's open action to rateOpenPerMin per person, opening nothing past it",
  },
  {
    name: "open body bound",
    file: "app/api/v1/conversations/route.ts",
    find: "if (raw.truncated)",
    replace: "if (false)",
    testFile: "tests/conversations/conversation-open.integration.test.ts",
    test: "refuses a REST open body past its limit with 413 request.too-large and Connection: close, opening nothing",
  },
  {
    name: "oauth pkce",
    file: "lib/oauth/token.ts",
    find: "if (!VERIFIER.test(verifier) || !(await pkceMatches(verifier, row.codeChallenge)))",
    replace: "if (!VERIFIER.test(verifier))",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a missing or wrong PKCE verifier, or another redirect URI, does not spend the code",
  },
  {
    name: "oauth code replay",
    file: "lib/oauth/token.ts",
    find: 'await revokeFamily(tx, row, "code-replayed");',
    replace: "",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a replayed code is refused and revokes what the first exchange issued",
  },
  {
    name: "oauth refresh reuse",
    file: "lib/oauth/token.ts",
    find: 'await revokeFamily(tx, row, "refresh-token-reused");',
    replace: "",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "refreshes with a rotated token; reusing the old one revokes the connection and its next call is 401",
  },
  {
    name: "oauth refresh grace window",
    file: "lib/oauth/token.ts",
    find: "if (row.inGrace && row.live && (await findUnusedRefreshToken(tx, sha256Hex(successor), row.id)))",
    replace: "if (row.live && (await findUnusedRefreshToken(tx, sha256Hex(successor), row.id)))",
    testFile: "tests/oauth/oauth-refresh.integration.test.ts",
    test: "the previous token after the window, or once its successor rotated too, revokes the connection",
  },
  {
    name: "oauth consent step-up",
    file: "lib/oauth/authorize.ts",
    find: "const scopes = stepUp ? chosen : chosen.filter((scope) => scope !== DELEGATED_SCOPE);",
    replace: "const scopes = chosen;",
    testFile: "tests/oauth/oauth-connections.integration.test.ts",
    test: "a consent without a fresh proof gets no refunds:write; with one it does, audited and emailed like a new key",
  },
  {
    name: "oauth refresh lifetimes",
    file: "lib/oauth/token.ts",
    find: "if (row.lapsed) {",
    replace: "if (false) {",
    testFile: "tests/oauth/oauth-connections.integration.test.ts",
    test: "a refresh token unused past the tenant's idle lifetime, or a connection past its absolute one, no longer refreshes",
  },
  {
    name: "rate per agent",
    file: "lib/gateway/rate.ts",
    find: "const agentKey = apiKeyId ? agentBucket(conversation.agentId) : conversationKey;",
    replace: "const agentKey = apiKeyId ? `k:${apiKeyId}` : conversationKey;",
    testFile: "tests/oauth/oauth-connections.integration.test.ts",
    test: "an agent's key and two connections share one per-minute budget: consenting again adds none",
  },
  {
    name: "oauth audience",
    file: "lib/auth/keys/access-tokens.ts",
    find: "      audience: mcpResourceOf(issuer),\n",
    replace: "",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a token for another audience, expired, or signed by an unknown key is 401",
  },
  {
    name: "oauth redirect uri",
    file: "lib/oauth/authorize.ts",
    find: "const returnsToClient = redirectUri !== undefined && redirectUriMatches(registered, redirectUri);",
    replace: "const returnsToClient = redirectUri !== undefined;",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "an unknown client or a redirect URI it did not register is a page, never a redirect",
  },
  {
    name: "oauth resource",
    file: "lib/oauth/authorize.ts",
    find: "if (input.resource !== undefined && input.resource !== mcpResourceOf(issuer))",
    replace: "if (input.resource === undefined && input.resource !== mcpResourceOf(issuer))",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "no PKCE, plain PKCE or another resource go back to the client as errors, granting nothing",
  },
  {
    name: "oauth dcr switch",
    file: "lib/oauth/authorize.ts",
    find: 'if (client.kind === "dcr" && !agent.dcrEnabled)',
    replace: 'if (client.kind === "dcr" && agent.dcrEnabled === null)',
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a self-registered client (DCR, as Cursor and mcp-remote do) connects once the admin allows it, and its refund is held, approved and read back",
  },
  {
    name: "oauth consent origin",
    file: "app/api/oauth/authorize/route.ts",
    find: "if (!fromOwnPage(request, issuerOf(request)))",
    replace: "if (!fromOwnPage(request, issuerOf(request)) && false)",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a form posted from another site is refused before anything is read",
  },
  {
    name: "oauth scope narrowing",
    file: "lib/conversations/authenticate.ts",
    find: "found.conversation.scopes = found.conversation.scopes.filter((scope) => granted.includes(scope));",
    replace: "void granted;",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a client known by its metadata document (CIMD, as VS Code does) connects with only the scopes the person chose",
  },
  {
    name: "oauth insufficient scope",
    file: "lib/agent-api/mcp/endpoint.ts",
    find: "if (ask) return mcpInsufficientScope(issuerOf(request), ask.scopes, ask.tool);",
    replace: "",
    testFile: "tests/oauth/oauth-scopes.integration.test.ts",
    test: "a tool outside the token's scopes is 403 insufficient_scope with the scopes to ask for, and nothing is proposed",
  },
  {
    name: "oauth revocation",
    file: "lib/oauth/sql.ts",
    find: 'UPDATE "ApiKey" SET "revokedAt" = CURRENT_TIMESTAMP WHERE "id" = ${row.apiKeyId} AND "revokedAt" IS NULL',
    replace: "SELECT ${row.apiKeyId}",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "an admin's revocation makes the connection's next call 401, with an audit entry",
  },
  {
    name: "oauth registration rate",
    file: "lib/oauth/clients.ts",
    find: "if (recent.fromAddress >= REGISTRATION_LIMITS.perAddress || recent.all >= REGISTRATION_LIMITS.all)",
    replace: "if (recent.all >= REGISTRATION_LIMITS.all)",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "registration refuses unsafe redirect URIs and confidential clients, and is rate limited per address",
  },
  {
    name: "oauth metadata client id",
    file: "lib/oauth/clients.ts",
    find: "if (identity.data.client_id !== clientId)",
    replace: "if (identity.data.client_id === null)",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a metadata document that cannot be fetched, is oversized, names another client or no usable redirect URI is refused in one sentence; the log says why",
  },
  {
    name: "oauth assertion jti",
    file: "lib/oauth/client-auth.ts",
    find: "return fresh ? { ok: true, clientId } :",
    replace: "return fresh || true ? { ok: true, clientId } :",
    testFile: "tests/oauth/hosts.integration.test.ts",
    test: "chatgpt.json: private_key_jwt with a key at its jwks_uri; wrong audience, expired, missing or replayed assertions are refused and spend nothing",
  },
  {
    name: "oauth assertion audience",
    file: "lib/oauth/client-auth.ts",
    find: "if (!audience.some((aud) => audiences.includes(aud)))",
    replace: "if (false)",
    testFile: "tests/oauth/hosts.integration.test.ts",
    test: "chatgpt.json: private_key_jwt with a key at its jwks_uri; wrong audience, expired, missing or replayed assertions are refused and spend nothing",
  },
  {
    name: "oauth assertion required",
    file: "lib/oauth/client-auth.ts",
    find: 'if (!credentials || credentials.authMethod === "none")',
    replace: 'if (!credentials || credentials.authMethod !== "client_secret_post")',
    testFile: "tests/oauth/hosts.integration.test.ts",
    test: "chatgpt.json: private_key_jwt with a key at its jwks_uri; wrong audience, expired, missing or replayed assertions are refused and spend nothing",
  },
  {
    name: "oauth no key set fetch before the claims",
    file: "lib/oauth/client-auth.ts",
    find: "if (fault) return refused(",
    replace: "if (fault && (await clientKeys(clientId, credentials, undefined, fetcher))) return refused(",
    testFile: "tests/oauth/oauth-client-keys.integration.test.ts",
    test: "refuses an assertion that is wrong on its face before fetching any key set, saying what was wrong",
  },
  {
    name: "oauth key set cached",
    file: "lib/oauth/client-auth.ts",
    find: "    kept.success &&\n",
    replace: "    false &&\n",
    testFile: "tests/oauth/oauth-client-keys.integration.test.ts",
    test: "fetches the key set once and verifies later assertions with the kept copy, for as long as its headers say",
  },
  {
    name: "oauth key set fetch per client",
    file: "lib/oauth/client-auth.ts",
    find: 'row.key.startsWith("k:c:") ? KEY_SET_FETCH_LIMITS.perClient',
    replace: 'row.key.startsWith("k:c:") ? Infinity',
    testFile: "tests/oauth/oauth-client-keys.integration.test.ts",
    test: "limits key set fetches a minute per client and per host, and then fetches nothing, telling the client to wait",
  },
  {
    name: "oauth key set failure in one sentence",
    file: "lib/oauth/client-auth.ts",
    find: "    return refused(UNVERIFIED_ASSERTION);\n  }\n  const keep",
    replace: "    return refused(fetched.reason);\n  }\n  const keep",
    testFile: "tests/oauth/oauth-client-keys.integration.test.ts",
    test: "says one sentence whatever the fetch met (internal address, loopback name, no such name, 404, not a key set); the log says which",
  },
  {
    name: "oauth client secret",
    file: "lib/oauth/client-auth.ts",
    find: "return given.length === expected.length && timingSafeEqual(given, expected)",
    replace: "return given.length === expected.length",
    testFile: "tests/oauth/hosts.integration.test.ts",
    test: "claude.registration.json: client_secret_post gets a secret, stored hashed, required at the token endpoint",
  },
  {
    name: "oauth metadata fetch per person",
    file: "lib/oauth/clients.ts",
    find: 'row.key.startsWith("m:u:") ? METADATA_FETCH_LIMITS.perPerson : METADATA_FETCH_LIMITS.perHost',
    replace: 'row.key.startsWith("m:u:") ? Infinity : METADATA_FETCH_LIMITS.perHost',
    testFile: "tests/oauth/oauth-metadata-fetch.integration.test.ts",
    test: "limits a person's fetches a minute, and then fetches nothing for them, telling them to wait",
  },
  {
    name: "oauth metadata fetch per host",
    file: "lib/oauth/clients.ts",
    find: 'row.key.startsWith("m:u:") ? METADATA_FETCH_LIMITS.perPerson : METADATA_FETCH_LIMITS.perHost',
    replace: 'row.key.startsWith("m:u:") ? METADATA_FETCH_LIMITS.perPerson : Infinity',
    testFile: "tests/oauth/oauth-metadata-fetch.integration.test.ts",
    test: "limits the fetches to one host a minute, whoever asks",
  },
  {
    name: "oauth metadata failure in one sentence",
    file: "lib/oauth/clients.ts",
    find: "reason: UNUSABLE_DOCUMENT,",
    replace: "reason: document.reason,",
    testFile: "tests/oauth/oauth-metadata-fetch.integration.test.ts",
    test: "says one sentence for a refused connection, a TLS failure and an internal address; the log says which",
  },
  {
    name: "a switch resumes the customer's conversation",
    file: "lib/conversations/sql.ts",
    find: "return row?.id ?? null;",
    replace: "return null;",
    testFile: "tests/conversations/working-on.integration.test.ts",
    test: "the person switches to A and the model refunds A's order; to B and it reads B's order; A's order is not found while B is chosen",
  },
  {
    name: "a switch is audited",
    file: "lib/conversations/working-on.ts",
    find: 'action: "connection.customer-switched",',
    replace: 'action: "connection.customer-switched-unsealed",',
    testFile: "tests/conversations/working-on.integration.test.ts",
    test: "only the connection's own person switches it, to a customer of their tenant; bad input changes nothing",
  },
  {
    name: "a pasted key names its conversation",
    file: "app/api/mcp/route.ts",
    find: "if (!found && (named !== null || !agent.connection))",
    replace: "if (!found && named !== null)",
    testFile: "tests/conversations/working-on.integration.test.ts",
    test: "the old URL form keeps working for a connection, and a pasted key still names its conversation",
  },
  {
    name: "a stalled completion reads the refund first",
    file: "lib/payments/refunds.ts",
    find: "if (performance.now() - committedAt > FRESH_FOR_MS) return completeRefundOfCall(callId, provider);",
    replace: "",
    testFile: "tests/payments/settle-once.integration.test.ts",
    test: "a process that stalled past the fresh window reads the refund first: one released meanwhile is never sent",
  },
  {
    name: "imports point down",
    file: "eslint/imports-point-down.mjs",
    find: "if (toFloor >= fromFloor)",
    replace: "if (toFloor > fromFloor)",
    testFile: "tests/import-layers.test.ts",
    test: "refuses a sideways import between folders on one floor, with either spelling of the path",
  },
  {
    name: "mcp 2026 routing",
    file: "lib/agent-api/mcp/endpoint.ts",
    find: "const modern = !(await isLegacyRequest(request, parsed.value));",
    replace: "const modern = false;",
    testFile: "tests/agent-api/waits/mcp-2026.integration.test.ts",
    test: "answers server/discover, tools/list and tools/call to the v2 SDK client without an initialize",
  },
  {
    name: "mcp header mismatch (2025 era)",
    file: "lib/agent-api/mcp/endpoint.ts",
    find: "if (mismatch) return rpcError(400, HEADER_MISMATCH, mismatch);",
    replace: "",
    testFile: "tests/agent-api/waits/mcp-2026.integration.test.ts",
    test: "refuses an oversized body before it is parsed, and a 2025-era request whose Mcp-Method header disagrees",
  },
  {
    name: "mcp task only when declared",
    file: "lib/agent-api/mcp/modern.ts",
    find: 'if (call.outcome.kind === "pending_approval" && declaresTasks(ctx))',
    replace: 'if (call.outcome.kind === "pending_approval")',
    testFile: "tests/agent-api/waits/mcp-2026.integration.test.ts",
    test: "never returns a task to a client that did not declare the extension, and refuses it the tasks methods",
  },
  {
    name: "mcp tasks methods gated",
    file: "lib/agent-api/mcp/tasks-extension.ts",
    find: "if (!declaresTasks(ctx)) {",
    replace: "if (!declaresTasks(ctx) && false) {",
    testFile: "tests/agent-api/waits/mcp-2026.integration.test.ts",
    test: "never returns a task to a client that did not declare the extension, and refuses it the tasks methods",
  },
  {
    name: "mcp cors origin",
    file: "lib/agent-api/mcp/cors.ts",
    find: "  if (foreign) return foreign;\n  const origin",
    replace: "  const origin",
    testFile: "tests/agent-api/mcp-cors.integration.test.ts",
    test: "refuses a preflight from a foreign origin with the DNS-rebinding guard's 403 and no CORS headers",
  },
  {
    name: "rule engine errors fail closed",
    file: "lib/policy-rules/evaluate.ts",
    find: "if (diagnostics.errors.length > 0) {",
    replace: "if (diagnostics.errors.length < 0) {",
    testFile: "tests/policy-rules/rules-route.integration.test.ts",
    test: "a rule set that fails at call time fails closed: the call is not allowed, and an approval is not executed",
  },
  {
    name: "rule screen errors fail closed",
    file: "lib/policy-rules/evaluate.ts",
    find: "screened.response.diagnostics.errors.length === 0",
    replace: "screened.response.diagnostics.errors.length >= 0",
    testFile: "tests/policy-rules/screen.test.ts",
    test: "gives the verdict the rules alone give, on 3,000 random calls over rules of every shape",
  },
  {
    name: "rule screen scopes",
    file: "lib/policy-rules/screen.ts",
    find: '({ Value: "__entity" in uid ? uid : { __entity: uid } })',
    replace: "({ Value: uid })",
    testFile: "tests/policy-rules/screen.test.ts",
    test: "gives the verdict the rules alone give, on 3,000 random calls over rules of every shape",
  },
  {
    name: "seal batch order",
    file: "lib/audit/sql.ts",
    find: 'ORDER BY "txid" OFFSET',
    replace: 'ORDER BY "cut" OFFSET',
    testFile: "tests/audit/seal-batches.integration.test.ts",
    test: "cut the range at the row that many in, counting transaction ids as numbers across a power of ten",
  },
  {
    name: "rules only forbid",
    file: "lib/policy-rules/validate.ts",
    find: 'if (effect !== "forbid") {',
    replace: "if (!effect) {",
    testFile: "tests/policy-rules/engine.test.ts",
    test: "refuses a permit, a rule without @id, and one with both or neither of @hold and @deny",
  },
  {
    name: "rule nesting bound",
    file: "lib/policy-rules/limits.ts",
    find: "if (depth > RULE_LIMITS.depth) {",
    replace: "if (depth > 100_000) {",
    testFile: "tests/policy-rules/engine.test.ts",
    test: "refuses oversized and deeply nested sets before the parser sees them (the wasm parser would overflow)",
  },
  {
    name: "rule operator chain bound",
    file: "lib/policy-rules/limits.ts",
    find: "const overLimit = countsOverLimit(stretch);",
    replace: "const overLimit = null;",
    testFile: "tests/policy-rules/engine.test.ts",
    test: "refuses a set chaining thousands of operators before the engine parses the whole set (its stack overflowed)",
  },
  {
    name: "rule reserved ids",
    file: "lib/policy-rules/validate.ts",
    find: "if (id.startsWith(RESERVED_ID_PREFIX)) {",
    replace: "if (false) {",
    testFile: "tests/policy-rules/engine.test.ts",
    test: "refuses a rule under a built-in policy's id (it replaced the base permit)",
  },
  {
    name: "unreadable live rules loosen",
    file: "lib/admin/changes/loosening.ts",
    find: "if (before === null) return [UNREADABLE_RULES];",
    replace: "if (before === null) return [];",
    testFile: "tests/policy-rules/publishing.integration.test.ts",
    test: "replacing a live set that no longer validates loosens it whole: step-up, then a second admin",
  },
  {
    name: "rule deny",
    file: "lib/gateway/rules.ts",
    find: 'if (check?.live.verdict === "deny") return outcome("policy.rule-denied");',
    replace: "",
    testFile: "tests/policy-rules/rules-route.integration.test.ts",
    test: "a refund to a customer on fraud watch is denied with a stable code, no effect, and the model is not told why",
  },
  {
    name: "rules at approval",
    file: "lib/gateway/recheck.ts",
    find: "if (stopped) return { ok: false, outcome: stopped, order };",
    replace: "",
    testFile: "tests/policy-rules/rules-route.integration.test.ts",
    test: "whoever approves: a customer put on fraud watch after the request stops its approval, nothing executes",
  },
  {
    name: "rules loosening held",
    file: "lib/admin/changes/loosening.ts",
    find: 'return change.status === "live" && change.loosened.length > 0 ? "needs-second-admin" : "tightening";',
    replace: 'return "tightening";',
    testFile: "tests/policy-rules/publishing.integration.test.ts",
    test: "dropping a rule in force needs step-up, then a second admin; until then the old rules decide",
  },
  {
    name: "replay compares the candidate",
    file: "lib/policy-rules/replay.ts",
    find: "const would = decidedBy(decision.consequence, candidate);",
    replace: "const would = decidedBy(decision.consequence, decision.live);",
    testFile: "tests/policy-rules/shadow-replay.integration.test.ts",
    test: "a shadow set is recorded beside the live one, never enforced; replay over the same calls reports the same",
  },
  {
    name: "publish refuses failing cases",
    file: "lib/admin/rules/publish.ts",
    find: 'if (failing.length > 0) return { ok: false, code: "rules.cases-failed", errors: failing };',
    replace: "",
    testFile: "tests/policy-rules/versions.integration.test.ts",
    test: "a set whose own case fails is not published: refused in words, nothing written, the old rules stay",
  },
  {
    name: "rollback classified",
    file: "lib/admin/rules/publish.ts",
    find: 'const kind = classifyAdminChange({ kind: "rules", status: rules.status, loosened });',
    replace:
      'const kind = rules.restoresVersion !== null ? "tightening" : classifyAdminChange({ kind: "rules", status: rules.status, loosened });',
    testFile: "tests/policy-rules/versions.integration.test.ts",
    test: "a rollback that drops a rule in force is loosening: step-up, then the second admin, who sees it is a rollback",
  },
  {
    name: "exposure re-read without the reservation",
    file: "lib/gateway/rules.ts",
    find: "const before = row && { ...row, agentExposureCents: row.agentExposureCents - impactCents };",
    replace: "const before = row;",
    testFile: "tests/policy-rules/rich-facts.integration.test.ts",
    test: "the agent's exposure is read without the call's own reservation, also when judged again under its locks",
  },
  {
    name: "time zone change held",
    file: "lib/admin/changes/loosening.ts",
    find: 'return change.readsTime ? "needs-second-admin" : "tightening";',
    replace: 'return "tightening";',
    testFile: "tests/policy-rules/rich-facts.integration.test.ts",
    test: "the tenant's time zone: an unknown name is refused; while live rules read the time a change waits for a second admin",
  },
  {
    name: "secret tag length",
    file: "lib/secrets.ts",
    find: '  if (parts.length !== 3 || iv.length !== NONCE_BYTES || tag.length !== TAG_BYTES)\n    throw new Error(\n      `${column} is not a value this server stored: it needs a ${NONCE_BYTES}-byte nonce and a ${TAG_BYTES}-byte tag; set it again`,\n    );\n  const decipher = createDecipheriv("aes-256-gcm", key(), iv, { authTagLength: TAG_BYTES })',
    replace: '  const decipher = createDecipheriv("aes-256-gcm", key(), iv)',
    testFile: "tests/security/secrets.integration.test.ts",
    test: "a stored value whose authentication tag is cut short is refused, not checked on its first bytes only",
  },
];
const root = process.cwd();
// `scripts/defects.ts "scope" "bound order"` runs only the named entries; a name that is not an entry is refused.
const only = process.argv.slice(2);
const named = DEFECTS.map((defect) => defect.name);
const twice = named.filter((name, index) => named.indexOf(name) !== index);
if (twice.length > 0) {
  console.error(`seeded defects must have names of their own; used twice: ${twice.join(", ")}`);
  process.exit(1);
}
const unknown = only.filter((name) => !DEFECTS.some((defect) => defect.name === name));
if (unknown.length > 0) {
  console.error(`no seeded defect named ${unknown.map((name) => `"${name}"`).join(", ")}`);
  process.exit(1);
}
const selected = only.length ? DEFECTS.filter((defect) => only.includes(defect.name)) : DEFECTS;

/** A title pattern: the literal parts of `template` with `.+` wherever `placeholder` fills something in. */
function titlePattern(template: string, placeholder: RegExp): RegExp {
  const pattern = template
    .split(placeholder)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".+");
  return new RegExp(`^${pattern}$`);
}

/**
 * Whether a test file declares a test of this title: literally, as a template whose `${…}` parts it fills, or as
 * an `it.each(…)("…")` title whose `%s`/`%j`/`%d`/`%i` its cases fill.
 */
function declares(source: string, title: string): boolean {
  if (source.includes(title)) return true;
  const templates = [...source.matchAll(/\bit(?:\.\w+)?\(\s*`([^`]*)`/g)].map(([, template]) =>
    titlePattern(template, /\$\{[^}]*\}/),
  );
  const eachTitles = [...source.matchAll(/\)\(\s*"([^"]*%[sjdi][^"]*)"/g)].map(([, template]) =>
    titlePattern(template, /%[sjdi]/),
  );
  return [...templates, ...eachTitles].some((pattern) => pattern.test(title));
}

// Checked before anything runs: an entry whose files moved must follow them, not pass or crash later.
const stale = selected.flatMap((defect) => {
  if (!existsSync(path.join(root, defect.file))) return [`${defect.name}: ${defect.file} does not exist`];
  if (!existsSync(path.join(root, defect.testFile))) return [`${defect.name}: ${defect.testFile} does not exist`];
  if (!declares(readFileSync(path.join(root, defect.testFile), "utf8"), defect.test))
    return [`${defect.name}: ${defect.testFile} declares no test named "${defect.test}"`];
  return [];
});
if (stale.length > 0) {
  console.error(`seeded-defect check refused; update scripts/defects.ts:\n  ${stale.join("\n  ")}`);
  process.exit(1);
}
// Two copies of the project take turns through the list: most of a run is starting Vitest and waiting on PostgreSQL,
// so two at once finish in a little over half the time on the two cores CI has.
const WORKERS = Math.max(1, Number(process.env.DEFECT_WORKERS ?? 2));

const runs = new Set<ChildProcess>();

function vitest(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules", "vitest", "vitest.mjs"), ...args], {
      cwd,
      env,
      stdio: "ignore",
    });
    runs.add(child);
    child.once("exit", (code) => {
      runs.delete(child);
      resolve(code);
    });
  });
}

/** Disables one check in `copy`, runs the test file that guards it, puts the check back; a failure's sentence or null. */
async function tryDefect(copy: string, defect: Defect, databaseUrl: string): Promise<string | null> {
  const target = path.join(copy, defect.file);
  const original = readFileSync(target, "utf8");
  const occurrences = original.split(defect.find).length - 1;
  if (occurrences !== 1)
    return `${defect.name}: expected the guarded code once in ${defect.file}, found it ${occurrences} times; update scripts/defects.ts`;
  writeFileSync(target, original.replace(defect.find, defect.replace));
  const report = path.join(copy, "defect-report.json");
  rmSync(report, { force: true });
  const status = await vitest(copy, ["run", defect.testFile, "--reporter=json", `--outputFile=${report}`], {
    ...process.env,
    TEST_DATABASE_URL: databaseUrl,
  });
  writeFileSync(target, original);
  if (status === null) return `${defect.name}: vitest did not finish`;
  if (!existsSync(report)) return `${defect.name}: vitest ran no test file for ${defect.testFile}`;
  const results = JSON.parse(readFileSync(report, "utf8")) as {
    testResults: { assertionResults: { title: string; status: string }[] }[];
  };
  const guard = results.testResults.flatMap((file) => file.assertionResults).find((test) => test.title === defect.test);
  if (!guard) return `${defect.name}: no test named "${defect.test}" in ${defect.testFile}`;
  if (guard.status !== "failed")
    return `${defect.name}: "${defect.test}" still ${guard.status} with the check disabled`;
  console.log(`caught  ${defect.name.padEnd(20)} by "${defect.test}"`);
  return null;
}

const cluster = process.env.TEST_DATABASE_URL ? null : await startCluster();
const databaseUrl = process.env.TEST_DATABASE_URL ?? cluster!.url;
const copies: string[] = [];
// Also when the run is interrupted (Ctrl-C, `timeout`; the cluster's own handler then ends the process): a Vitest
// still running would write its report into a removed copy.
const removeCopies = () => {
  runs.forEach((child) => child.kill("SIGKILL"));
  copies.splice(0).forEach((copy) => rmSync(copy, { recursive: true, force: true }));
};
process.once("exit", removeCopies);
const failures: string[] = [];
try {
  for (let worker = 0; worker < Math.min(WORKERS, selected.length); worker++) {
    const copy = mkdtempSync(path.join(tmpdir(), "toolgate-defects-"));
    copies.push(copy);
    cpSync(root, copy, {
      recursive: true,
      filter: (source) => !/[\\/](node_modules|\.next|\.git|\.toolgate|test-results|playwright-report)$/.test(source),
    });
    symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"), "dir");
  }
  const queue = [...selected];
  await Promise.all(
    copies.map(async (copy) => {
      for (let defect = queue.shift(); defect; defect = queue.shift()) {
        const failure = await tryDefect(copy, defect, databaseUrl);
        if (failure) failures.push(failure);
      }
    }),
  );
} finally {
  removeCopies();
  cluster?.stop();
}

if (failures.length > 0) {
  console.error(`\nseeded-defect check failed:\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
console.log(`\nseeded-defect check: all ${selected.length} disabled checks were caught`);
