import { canonicalJson, sha256Hex } from "../canonical";
import { db, transaction, type Db, type Tx } from "../db";
import { newId } from "../ids";
import { logError, withLogContext } from "../observe/log";
import { countDecision, countShadowVerdict } from "../observe/metrics";
import { span } from "../observe/tracing";
import type { ConversationWaiter } from "../live";
import { callableTools } from "../tools/registry";
import { readsCalls, type AnyTool, type ExecutedCall, type ToolDefinition, type ToolPorts } from "../tools/types";
import { checkAllowlist } from "./checks/allowlist";
import { requestApproval, type ApprovalNotifier } from "./outcome/approval";
import { ceilingPassed, releaseCeilings, reserveCeilings } from "./decide/ceilings";
import { callFactsFrom, callFactsStatements, loadCallFacts, planCallFacts, type CallFacts } from "./context/facts";
import { executeCall } from "./outcome/execute";
import { effectNotMoved } from "./outcome/sql";
import { conversationLock, lockedFacts, type LockedConversationRow } from "./context/lock";
import { checkIdempotency, deriveCallKey } from "./context/idempotency";
import { bindsCallKey, outcome, UNKNOWN_TOOL, type Outcome, type StageResult } from "../outcome";
import { parseEnvelope, type RawProposal } from "./checks/parse";
import { decidePolicy, heldFor, type CeilingHit } from "./decide/policy";
import { countAndLimitCall } from "./checks/rate";
import { checkRules, readsMovingFacts, recheckRules, ruleHolds, rulesDetail, rulesStop } from "./decide/rules";
import { appendDecision, newCallRecord, recordCall, wholeMs } from "./outcome/record";
import { checkSchema } from "./checks/schema";
import { checkScope } from "./checks/scope";
import { checkSemantics } from "./checks/semantic";
import { checkState, explainState } from "./context/state";
import type { CallRecord, ConversationFacts, HintedOrder, RateCount, TenantPolicy } from "./types";
import type { RuleVerdict } from "../policy-rules/engine/evaluate";

export interface Proposal {
  conversation: ConversationFacts;
  policy: TenantPolicy;
  /** The API key the call came in on; null for a signed-in person using the browser console. */
  apiKeyId: string | null;
  /** The client's own call key for a write, if it sent one. */
  callKey: string | null;
  /** The model provider's id for this call, when the payload carried one: the next best key (`deriveCallKey`). */
  providerCallId?: string | null;
  raw: RawProposal;
  /** The call's rate buckets when the request's key lookup already counted it (the agent API's route). */
  rateCounted?: RateCount[];
  /** The order the body named, when the request's key lookup read it (the agent API's route). */
  hintedOrder?: HintedOrder;
}

/** What the gateway hands out to the features above it, provided by whoever proposes the call. */
export interface GatewayPorts extends ToolPorts {
  notifyApprovalRequested: ApprovalNotifier;
  /** Lets a read of the conversation's calls wait for them to change (`get_call_status` with `wait_seconds`). */
  waitForChange?: ConversationWaiter;
  /**
   * The conversation's tool a model most likely meant by a name no tool has (`tool.unknown`), among the tools the
   * conversation can call (upstream ones too); null when none is near.
   */
  nearestTool: (conversation: ConversationFacts, called: string) => Promise<string | null>;
}

export interface CallResult {
  id: string;
  outcome: Outcome;
  replayed: boolean;
  retryAfterSeconds?: number;
}

interface ValidCall {
  tool: AnyTool;
  args: Record<string, unknown>;
  argsCanonical: string;
  argsHash: string;
  impactCents: number;
}

/** The one entry point for every proposal, from the HTTP API and from the browser alike: SPEC section 4 in order. */
export async function proposeToolCall(proposal: Proposal, ports: GatewayPorts): Promise<CallResult> {
  const startedAt = performance.now();
  const id = newId("call");
  const seen: Seen = { toolName: UNKNOWN_TOOL, shadow: null };
  return span("gateway.propose", { "toolgate.call_id": id }, async (active) => {
    const result = await withLogContext({ callId: id }, () => runSequence(proposal, ports, id, startedAt, seen));
    countDecision(seen.toolName, result.outcome, performance.now() - startedAt);
    if (seen.shadow) countShadowVerdict(seen.toolName, seen.shadow);
    active?.setAttributes({
      "toolgate.tool": seen.toolName,
      "toolgate.decision.kind": result.outcome.kind,
      "toolgate.decision.stage": result.outcome.stage,
      "toolgate.decision.code": result.outcome.code,
      ...(result.replayed ? { "toolgate.replay_of": result.id } : {}),
    });
    return result;
  });
}

/** A stage of the sequence as a span of the call's trace (nothing while tracing is off). */
const stage = <T>(name: string, work: () => T): T => span(`gateway.${name}`, {}, work);

/**
 * What the sequence learnt on the way that the call's metrics count once it is decided: the registry's name once the
 * allowlist stage found the tool, and the shadow rules' verdict, the last try's when a call is checked twice.
 */
interface Seen {
  toolName: string;
  shadow: RuleVerdict | null;
}

async function runSequence(
  proposal: Proposal,
  ports: GatewayPorts,
  id: string,
  startedAt: number,
  seen: Seen,
): Promise<CallResult> {
  const { conversation } = proposal;
  const base = { id, tenantId: conversation.tenantId, conversationId: conversation.id, approvalId: null };
  try {
    const rate = await stage("rate", () =>
      countAndLimitCall(db, conversation, proposal.apiKeyId, proposal.policy, proposal.rateCounted),
    );
    if (!rate.ok) {
      await recordEarly({ ...base, toolName: seen.toolName, outcome: rate.outcome }, startedAt);
      return { id, outcome: rate.outcome, replayed: false, retryAfterSeconds: rate.retryAfterSeconds };
    }
    const checked = validate(proposal);
    if (!checked.ok) {
      seen.toolName = checked.toolName;
      // Looked up on this refusal alone: a call of a tool the conversation has costs nothing more.
      const nearest = checked.unknown === undefined ? null : await ports.nearestTool(conversation, checked.unknown);
      const refused = nearest ? { ...checked.outcome, nearest } : checked.outcome;
      await recordEarly({ ...base, toolName: seen.toolName, outcome: refused }, startedAt);
      return { id, outcome: refused, replayed: false };
    }
    const { tool } = checked.call;
    seen.toolName = tool.name;
    const callKey = deriveCallKey(
      { explicit: proposal.callKey, providerCallId: proposal.providerCallId },
      checked.call.argsHash,
    );
    const along = { proposal, ports, call: checked.call, id, startedAt, callKey, seen };
    if (tool.effect === "read") {
      return await checkAgainstData(db, { ...along, conversation: proposal.conversation, facts: null, commit: null });
    }
    // A write's transaction opens with the conversation's lock and then the call's facts, sent with BEGIN in one
    // round trip: each its own statement, so the facts are read after the lock is held (docs/decisions/028).
    const reads = { callKey, policy: proposal.policy, ports, hinted: proposal.hintedOrder };
    const plan = readsCalls(tool) ? null : planCallFacts(tool, checked.call.args, proposal.conversation, reads);
    // An automatic refund's effect commits in its own round trip; when its order does not move, nothing commits and
    // the call runs again in a transaction that commits on its own (docs/decisions/029).
    const checkInTransaction = (effectCommits: boolean) =>
      transaction(
        (tx, [[locked], factsRows]) =>
          checkAgainstData(tx, {
            ...along,
            conversation: lockedFacts(proposal.conversation, locked as LockedConversationRow | undefined),
            facts: plan && callFactsFrom(plan, factsRows),
            commit: effectCommits ? tx : null,
          }),
        { opening: [conversationLock(proposal.conversation.id), ...(plan ? callFactsStatements(plan) : [])] },
      );
    const committed = await checkInTransaction(true).catch((error: unknown) => {
      if (effectNotMoved(error)) return checkInTransaction(false);
      throw error;
    });
    // The external half of the effect runs only once its local record has committed.
    const { executed, ...result } = committed;
    if (!readsCalls(tool) && tool.external && !result.replayed && result.outcome.code === tool.external.pendingCode) {
      const committedAt = performance.now();
      return {
        ...result,
        outcome: await completeExternal(tool, result.id, ports, executed && { ...executed, committedAt }),
      };
    }
    return result;
  } catch (error) {
    logError("gateway.host-error", error, { callId: id, conversationId: conversation.id, toolName: seen.toolName });
    const failed = outcome("host.error");
    await recordEarly({ ...base, toolName: seen.toolName, outcome: failed }, startedAt).catch((recordError) =>
      logError("gateway.record-failed", recordError, { callId: id }),
    );
    return { id, outcome: failed, replayed: false };
  }
}

/**
 * Performs the external half of a committed effect. If that fails outright, the call keeps its committed,
 * truthful outcome (not known yet) and reconciliation finishes it; it is never reported as failed.
 */
export async function completeExternal(
  tool: ToolDefinition,
  callId: string,
  ports: ToolPorts,
  executed?: ExecutedCall<Record<string, unknown>> & { committedAt: number },
): Promise<Outcome> {
  const external = tool.external!;
  try {
    return await stage("external", () => external.complete({ callId, executed }, ports));
  } catch (error) {
    logError("gateway.external-failed", error, { callId, toolName: tool.name });
    return outcome(external.pendingCode);
  }
}

/** Stages 2-6: everything that needs no data. `unknown`: the name proposed, when no tool has it (`tool.unknown`). */
function validate(
  proposal: Proposal,
): { ok: true; call: ValidCall } | { ok: false; outcome: Outcome; toolName: string; unknown?: string } {
  const envelope = stage("parse", () => parseEnvelope(proposal.raw));
  if (!envelope.ok) return { ok: false, outcome: envelope.outcome, toolName: UNKNOWN_TOOL };
  const { name } = envelope.value;
  const allowed = stage("allowlist", () => checkAllowlist(name, proposal.conversation.tools));
  if (!allowed.ok) {
    const unknown = allowed.outcome.code === "tool.unknown" ? { unknown: name } : {};
    return { ok: false, outcome: allowed.outcome, toolName: UNKNOWN_TOOL, ...unknown };
  }
  const tool = allowed.value;
  const scoped = stage("scope", () => checkScope(tool, proposal.conversation.scopes));
  if (!scoped.ok) return { ok: false, outcome: scoped.outcome, toolName: tool.name };
  const schema = stage("schema", () => checkSchema(tool, envelope.value.arguments));
  if (!schema.ok) return { ok: false, outcome: schema.outcome, toolName: tool.name };
  const semantic = stage("semantic", () => checkSemantics(schema.value));
  if (!semantic.ok) return { ok: false, outcome: semantic.outcome, toolName: tool.name };
  const args = semantic.value;
  const argsCanonical = canonicalJson(args);
  return {
    ok: true,
    call: {
      tool,
      args,
      argsCanonical,
      argsHash: sha256Hex(argsCanonical),
      impactCents: readsCalls(tool) ? 0 : tool.impactCents(args),
    },
  };
}

/**
 * Stages 7-13 against data. A write runs inside one transaction that first locked the conversation row
 * (`conversation` has what the lock read), so its budgets and call keys are read and written by one call at a time.
 */
async function checkAgainstData(
  client: Db,
  along: {
    proposal: Proposal;
    conversation: ConversationFacts;
    ports: GatewayPorts;
    call: ValidCall;
    id: string;
    startedAt: number;
    callKey: string;
    /** Stage 7's answer when the transaction's first round trip read it. */
    facts: StageResult<CallFacts> | null;
    /** The transaction an automatic irreversible effect commits with its statement (`executeCall`), or null. */
    commit: Tx | null;
    seen: Seen;
  },
): Promise<CallResult & { executed?: ExecutedCall<Record<string, unknown>> }> {
  const { proposal, conversation, ports, call: validCall, id, startedAt, callKey } = along;
  const { tool: anyTool } = validCall;
  // A try counts only the shadow verdict it reached itself.
  along.seen.shadow = null;
  // A read of the conversation's own calls answers in place of the order stages; it is recorded like any call.
  if (readsCalls(anyTool)) {
    const read = await anyTool.readCalls({
      client,
      args: validCall.args,
      conversationId: proposal.conversation.id,
      callable: callableTools(proposal.conversation),
      waitForChange: ports.waitForChange,
    });
    await recordEarly(
      {
        id,
        tenantId: proposal.conversation.tenantId,
        conversationId: proposal.conversation.id,
        toolName: anyTool.name,
        approvalId: null,
        outcome: read,
      },
      startedAt,
    );
    return { id, outcome: read, replayed: false };
  }
  const call = { ...validCall, tool: anyTool };
  const { tool, args } = call;
  const record = newCallRecord({ ...call, id, conversation, toolName: tool.name });
  // The key is bound only once the call owns it (past stage 8) and only by an outcome that is final.
  let ownsKey = false;
  const finish = async (result: Outcome): Promise<CallResult> => {
    record.outcome = result;
    if (ownsKey && bindsCallKey(result)) record.callKey = callKey;
    record.latencyMs = performance.now() - startedAt;
    await stage("record", () => recordCall(client, record));
    return { id, outcome: result, replayed: false };
  };

  const context =
    along.facts ??
    (await stage("context", () =>
      loadCallFacts(client, tool, args, conversation, {
        callKey,
        policy: proposal.policy,
        ports,
        hinted: proposal.hintedOrder,
      }),
    ));
  if (!context.ok) return finish(context.outcome);
  const { order, stored, recent, ruleFacts } = context.value;
  record.orderId = order.id;

  const idempotency = stage("idempotency", () => checkIdempotency(tool, callKey, call.argsHash, stored));
  if (!idempotency.ok) return finish(idempotency.outcome);
  const { replay } = idempotency.value;
  ownsKey = tool.effect !== "read";
  if (replay) {
    await stage("record", () =>
      appendDecision(client, {
        tenantId: conversation.tenantId,
        conversationId: conversation.id,
        toolCallId: replay.id,
        toolName: tool.name,
        orderId: order.id,
        outcome: replay.outcome,
        replayed: true,
        latencyMs: performance.now() - startedAt,
      }),
    );
    return { id: replay.id, outcome: replay.outcome, replayed: true };
  }

  const state = stage("state", () => checkState(tool, args, order));
  if (!state.ok) return finish(await explainState(client, tool, order, state.outcome, ports));

  const policy = stage("policy", () =>
    decidePolicy(tool, conversation, proposal.policy, order, call.impactCents, recent),
  );
  if (!policy.ok) return finish(policy.outcome);
  const { consequence: numbers, meetsCeilings, duplicate } = policy.value;
  if (duplicate) record.detail = { duplicate_guard: duplicate };

  let rules = await stage("rules", () =>
    checkRules(client, tool, conversation, proposal.policy, order, call.impactCents, ruleFacts, call.args),
  );
  const runsAlone = meetsCeilings && !rulesStop(rules) && ruleHolds(rules).length === 0;
  // A call that would run without a person is reserved against the ceilings last. A live rule on what other calls
  // change (the agent's refunds today, the customer's flag) is judged again on those facts read under the
  // reservation's locks, so such a call reserves first, in a statement of its own (docs/decisions/023); any other
  // call's effect reserves in its own statement, and the locks are held for that statement and the commit alone
  // (docs/decisions/028).
  let reserved =
    runsAlone && rules && readsMovingFacts(rules)
      ? await stage("ceilings", () => reserveCeilings(client, conversation, call.impactCents))
      : null;
  if (reserved?.ok && rules) {
    rules = await stage("rules", () =>
      recheckRules(client, tool, conversation, proposal.policy, order, call.impactCents, call.args),
    );
    if (rulesStop(rules) || ruleHolds(rules).length > 0) {
      await stage("ceilings", () => releaseCeilings(client, conversation, call.impactCents));
      reserved = null;
    }
  }
  const stopped = rulesStop(rules);
  const held = ruleHolds(rules);
  const noteRules = (consequence: "auto" | "approval") => {
    if (rules) record.detail = { ...record.detail, ...rulesDetail(rules, consequence) };
  };
  noteRules(reserved && !reserved.ok ? "approval" : numbers);
  along.seen.shadow = rules?.shadow ?? null;
  if (stopped) return finish(stopped);

  const waitForPerson = async (ceiling: CeilingHit | null) => {
    const pending = await stage("approval", () =>
      requestApproval(
        client,
        {
          ...call,
          order,
          conversation,
          policy: proposal.policy,
          ceiling,
          duplicate: duplicate?.verdict === "held" ? heldFor(duplicate) : null,
          ruleHolds: held,
          callId: id,
        },
        ports.notifyApprovalRequested,
      ),
    );
    record.approvalId = pending.approvalId;
    // A rule's reason is the tenant's own words for the model: why this call waits for a person, and which rule.
    const reason = held.map((hold) => hold.reason).join(" ");
    return finish(reason ? { ...pending.outcome, reason, rules: held.map((hold) => hold.id) } : pending.outcome);
  };
  if (reserved && !reserved.ok) return waitForPerson(reserved.ceiling);
  if (held.length > 0 || numbers === "approval") return waitForPerson(null);

  const executable = { ...call, order, conversation, callId: id, exposure: reserved?.ok ? reserved.reservation : null };
  if (tool.effect === "read") return finish(await stage("execute", () => executeCall(client, executable, ports)));
  // A write's effect and its record (stages 12 and 13) commit in one statement; a reservation whose order moved on
  // is given back in it.
  const recordAs = (result: Outcome): CallRecord => ({
    ...record,
    outcome: result,
    callKey: bindsCallKey(result) ? callKey : null,
    latencyMs: wholeMs(performance.now() - startedAt),
  });
  const executedCall = { args, order, tenantId: conversation.tenantId, conversationId: conversation.id };
  if (runsAlone && !reserved) {
    const reserving = { ...executable, exposure: { reserveCents: call.impactCents }, commit: along.commit };
    const executed = await stage("execute", () => executeCall(client, reserving, ports, recordAs));
    if (executed) return { id, outcome: executed, replayed: false, executed: executedCall };
    // A ceiling refused: nothing was written, and the call waits for a person with the numbers it would pass.
    const ceiling = await stage("ceilings", () => ceilingPassed(client, conversation, call.impactCents));
    noteRules("approval");
    return waitForPerson(ceiling);
  }
  const executed = await stage("execute", () => executeCall(client, executable, ports, recordAs));
  return { id, outcome: executed, replayed: false, executed: executedCall };
}

async function recordEarly(
  call: Pick<CallRecord, "id" | "tenantId" | "conversationId" | "toolName" | "approvalId" | "outcome">,
  startedAt: number,
): Promise<void> {
  await stage("record", () =>
    recordCall(db, {
      ...call,
      callKey: null,
      argsCanonical: null,
      argsHash: null,
      orderId: null,
      latencyMs: performance.now() - startedAt,
    }),
  );
}
