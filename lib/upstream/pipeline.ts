import { canonicalJson, sha256Hex } from "../canonical";
import { db, transaction, type Db } from "../db";
import { newId } from "../ids";
import { logError } from "../observe/log";
import { countDecision } from "../observe/metrics";
import { outcome, bindsCallKey, type Outcome } from "../outcome";
import {
  appendDecision,
  type CallRecord,
  type CallResult,
  type ConversationFacts,
  countAndLimitCall,
  deriveCallKey,
  type Envelope,
  expireApproval,
  findPendingApproval,
  insertApproval,
  isCallKey,
  lockConversation,
  newCallRecord,
  parseEnvelope,
  pendingOutcome,
  type Proposal,
  recordCall,
  type TenantPolicy,
  UNKNOWN_TOOL,
  withdrawApproval,
} from "../gateway";
import {
  claimsReadOnly,
  namespaced,
  resolveOffered,
  SEPARATOR,
  splitName,
  type PinnedDefinition,
} from "./servers/definition";
import { nearestOffered } from "./calls/exposure";
import { forwardCall, type Sending } from "./calls/forward";
import { isUpstreamPreview, upstreamPreview, type UpstreamNotifier } from "./calls/preview";
import { checkUpstreamRules, rulesStop, type UpstreamRulesCheck } from "./calls/rules";
import { findKeyedCall, findTool, insertUpstreamCall, type ServerRow, type ToolRow, type UpstreamCallRow } from "./sql";
import { argumentIssues } from "./calls/validate";

// The second kind of tool: an upstream MCP server's, named `<server>__<tool>`. It goes through the gateway's stages
// that apply to it (rate, the bounded strict parse, exposure, the agent's permission, its pinned schema, call keys
// and replay under the conversation's lock, approval) and none of the order's, which the built-in tools keep intact.

interface Checked {
  tool: ToolRow & { server: ServerRow };
  definition: PinnedDefinition;
  hash: string;
  args: Record<string, unknown>;
  argsCanonical: string;
  argsHash: string;
  /** The live rules' word on the call; null when no rule names the tool. */
  rules: UpstreamRulesCheck | null;
}

/**
 * Runs an upstream tool's call; null when the envelope names no upstream tool (the gateway then answers it, malformed
 * envelopes included, so every call is counted and parsed once).
 */
export async function proposeUpstreamCall(proposal: Proposal, notify: UpstreamNotifier): Promise<CallResult | null> {
  // Most calls are the built-in tools': a body without the separator is the gateway's without a second parse.
  if (
    !Buffer.from(proposal.raw.bytes.buffer, proposal.raw.bytes.byteOffset, proposal.raw.bytes.byteLength).includes(
      SEPARATOR,
    )
  )
    return null;
  const envelope = parseEnvelope(proposal.raw);
  if (!envelope.ok || !splitName(envelope.value.name)) return null;
  const startedAt = performance.now();
  const id = newId("call");
  // As in the gateway, a name is logged and counted only once it is one of the conversation's tools (a bounded set),
  // never as the caller spelled an unknown one; a provider's name for one of them is that tool.
  const toolName = resolveOffered(proposal.conversation.tools, envelope.value.name) ?? UNKNOWN_TOOL;
  const result = await run(proposal, notify, id, toolName, envelope.value, startedAt).catch(async (error) => {
    logError("upstream.host-error", error, { callId: id, toolName });
    const failed = outcome("host.error");
    await recordEarly(proposal.conversation, id, toolName, failed, startedAt).catch((recordError) =>
      logError("upstream.record-failed", recordError, { callId: id }),
    );
    return { id, outcome: failed, replayed: false };
  });
  countDecision(toolName, result.outcome, performance.now() - startedAt);
  return result;
}

async function run(
  proposal: Proposal,
  notify: UpstreamNotifier,
  id: string,
  toolName: string,
  envelope: Envelope,
  startedAt: number,
): Promise<CallResult> {
  const { conversation } = proposal;
  const early = async (
    result: Outcome,
    extra: Partial<CallResult> = {},
    detail?: Record<string, unknown>,
  ): Promise<CallResult> => {
    await recordEarly(conversation, id, toolName, result, startedAt, detail);
    return { id, outcome: result, replayed: false, ...extra };
  };
  const rate = await countAndLimitCall(db, conversation, proposal.apiKeyId, proposal.policy, proposal.rateCounted);
  if (!rate.ok) return early(rate.outcome, { retryAfterSeconds: rate.retryAfterSeconds });
  const checked = await check(conversation, toolName, envelope, proposal.policy);
  if (!checked.ok) return early(checked.outcome);
  const { tool, definition, rules } = checked.call;
  if (tool.verdict === "deny") return early(outcome("tool.denied"));
  // The tenant's rules before the verdict: a rule denies or holds whatever the admin's verdict; one that cannot be
  // evaluated refuses the call (fail closed, as the built-in tools' rules do).
  const stopped = rulesStop(rules);
  if (stopped) return early(stopped, {}, { upstream: { rules } });
  // A read the admin lets run needs neither a call key nor the conversation's lock; it is still recorded before sent.
  if (tool.verdict === "allow" && !ruleHolds(rules) && claimsReadOnly(definition)) {
    const sending = await transaction((tx) => recordSending(tx, proposal, id, checked.call, null, startedAt));
    return { id, outcome: await forwardCall(id, sending), replayed: false };
  }
  const decided = await transaction((tx) => decideWrite(tx, proposal, notify, id, checked.call, startedAt));
  if (decided.send) return { id, outcome: await forwardCall(id, decided.sending), replayed: false };
  return decided.result;
}

/** The live rules' reasons for holding the call for a supervisor; null when none holds it. */
const ruleHolds = (rules: UpstreamRulesCheck | null) =>
  rules?.live.verdict === "hold" ? rules.live.rules.map((rule) => rule.reason) : null;

/** Exposure, the agent's permission now, the reviewed definition and its input schema, then the tenant's rules. */
async function check(
  conversation: ConversationFacts,
  toolName: string,
  { name: called, arguments: rawArgs }: Envelope,
  policy: TenantPolicy,
): Promise<{ ok: true; call: Checked } | { ok: false; outcome: Outcome }> {
  const target = splitName(toolName);
  // A name none of the conversation's tools has is told the nearest it has, looked up on this refusal alone.
  if (!target) {
    const nearest = await nearestOffered(conversation, called);
    return { ok: false, outcome: outcome("tool.not-available", nearest ? { nearest } : {}) };
  }
  const tool = await findTool(db, conversation.tenantId, target.server, target.tool);
  // A tool waiting for review or quarantined after a change is not there for agents.
  if (!tool || tool.status !== "reviewed" || !tool.reviewedDefinition || !tool.reviewedHash)
    return { ok: false, outcome: outcome("tool.not-available") };
  const agent = conversation.agent;
  if (!agent || !agent.active || agent.role !== "AGENT") return { ok: false, outcome: outcome("agent.not-authorized") };
  const definition = tool.reviewedDefinition;
  const issues = argumentIssues(tool.reviewedHash, definition.inputSchema, rawArgs);
  if (issues.length > 0) return { ok: false, outcome: outcome("schema.invalid", { issues }) };
  const argsCanonical = canonicalJson(rawArgs);
  const rules = await checkUpstreamRules(db, {
    tenantId: conversation.tenantId,
    agentId: conversation.agentId,
    policy,
    server: tool.server.name,
    tool: tool.name,
    definition,
    hash: tool.reviewedHash,
    args: rawArgs,
  });
  return {
    ok: true,
    call: {
      tool,
      definition,
      hash: tool.reviewedHash,
      args: rawArgs,
      argsCanonical,
      argsHash: sha256Hex(argsCanonical),
      rules,
    },
  };
}

/** Under the conversation's lock: the call key and its replay, then the hold or the record that precedes sending. */
async function decideWrite(
  tx: Db,
  proposal: Proposal,
  notify: UpstreamNotifier,
  id: string,
  call: Checked,
  startedAt: number,
): Promise<{ send: true; sending: Sending } | { send: false; result: CallResult }> {
  const conversation = await lockConversation(tx, proposal.conversation);
  const toolName = namespaced(call.tool.server.name, call.tool.name);
  const callKey = deriveCallKey({ explicit: proposal.callKey, providerCallId: proposal.providerCallId }, call.argsHash);
  const base = callRecord(proposal, id, toolName, call, startedAt);
  const finish = async (result: Outcome, extra: Partial<CallRecord> = {}) => {
    await recordCall(tx, { ...base, outcome: result, ...extra, latencyMs: performance.now() - startedAt });
    return { send: false as const, result: { id, outcome: result, replayed: false } };
  };
  // The agent's permission as read under the lock, as a write's is in the gateway.
  const agent = conversation.agent;
  if (!agent || !agent.active || agent.role !== "AGENT") return finish(outcome("agent.not-authorized"));
  if (!isCallKey(callKey)) return finish(outcome("call-key.missing"));
  const stored = await findKeyedCall(tx, { conversationId: conversation.id, toolName, callKey });
  if (stored && stored.argsHash !== call.argsHash) return finish(outcome("call-key.reused"));
  if (stored) {
    await appendDecision(tx, {
      tenantId: conversation.tenantId,
      conversationId: conversation.id,
      toolCallId: stored.id,
      toolName,
      orderId: null,
      outcome: stored.outcome,
      replayed: true,
      latencyMs: performance.now() - startedAt,
    });
    return { send: false, result: { id: stored.id, outcome: stored.outcome, replayed: true } };
  }
  if (call.tool.verdict === "allow" && !ruleHolds(call.rules))
    return { send: true, sending: await recordSending(tx, proposal, id, call, callKey, startedAt) };
  const held = await hold(tx, proposal, notify, id, toolName, call);
  const keyed = bindsCallKey(held.outcome) ? callKey : null;
  const result = await finish(held.outcome, { callKey: keyed, approvalId: held.approvalId });
  await insertUpstreamCall(tx, upstreamRow(proposal, id, toolName, call, keyed ?? `content:${call.argsHash}`, "held"));
  return result;
}

/** Opens the supervisor's request bound to the canonical arguments and the definition's hash, or joins the open one. */
async function hold(
  tx: Db,
  proposal: Proposal,
  notify: UpstreamNotifier,
  id: string,
  toolName: string,
  call: Checked,
): Promise<{ outcome: Outcome; approvalId: string }> {
  const { conversation } = proposal;
  const open = await findPendingApproval(tx, { conversationId: conversation.id, toolName, argsHash: call.argsHash });
  // Joined only while it shows the same definition: one held under a definition since changed cannot be approved.
  const same = isUpstreamPreview(open?.preview) && open.preview.definition_hash === call.hash;
  if (open && same && open.expiresAt > new Date())
    return { outcome: pendingOutcome(open.id, open.expiresAt, open.preview), approvalId: open.id };
  if (open && open.expiresAt <= new Date()) await expireApproval(tx, open.id);
  // One held under a definition since re-reviewed can never be approved: the agent's proposal under the reviewed one
  // takes its place, and the calls waiting on it read approval.withdrawn.
  else if (open) await withdrawApproval(tx, open.id, 0);
  const reason =
    ruleHolds(call.rules)?.join(" ") ??
    (claimsReadOnly(call.definition)
      ? "An admin set this tool to wait for a supervisor."
      : "This tool may change something upstream: a supervisor approves each call.");
  const preview = upstreamPreview({
    tool: toolName,
    server: call.tool.server.name,
    definition: call.definition,
    hash: call.hash,
    args: call.args,
    conversation,
    reason,
  });
  const approvalId = newId("apr");
  const expiresAt = new Date(Date.now() + proposal.policy.approvalTtlSeconds * 1000);
  await insertApproval(tx, {
    id: approvalId,
    tenantId: conversation.tenantId,
    conversationId: conversation.id,
    originCallId: id,
    toolName,
    orderId: upstreamOrderId(call.tool.server.name),
    argsHash: call.argsHash,
    impactCents: 0,
    preview,
    requestedById: conversation.agentId,
    expiresAt,
  });
  await notify(tx, { id: approvalId, tenantId: conversation.tenantId, expiresAt, preview });
  return { outcome: { ...pendingOutcome(approvalId, expiresAt, preview), reason }, approvalId };
}

/** An upstream request acts on no order: its order column names the server instead, never an order's id. */
export const upstreamOrderId = (server: string) => `upstream:${server}`;

/** The call's row says its outcome is unknown before anything is sent: a crash from here on leaves exactly that. */
async function recordSending(
  tx: Db,
  proposal: Proposal,
  id: string,
  call: Checked,
  callKey: string | null,
  startedAt: number,
): Promise<Sending> {
  const toolName = namespaced(call.tool.server.name, call.tool.name);
  const unknown = outcome("upstream.outcome-unknown");
  await recordCall(tx, {
    ...callRecord(proposal, id, toolName, call, startedAt),
    callKey,
    outcome: unknown,
    latencyMs: performance.now() - startedAt,
  });
  const row = upstreamRow(proposal, id, toolName, call, callKey ?? `call:${id}`, "sending");
  await insertUpstreamCall(tx, row);
  return {
    call: {
      ...row,
      argsCanonical: call.argsCanonical,
      argsHash: call.argsHash,
      conversationId: proposal.conversation.id,
      approvalId: null,
    },
    server: call.tool.server,
  };
}

function callRecord(proposal: Proposal, id: string, toolName: string, call: Checked, startedAt: number): CallRecord {
  return {
    ...newCallRecord({ ...call, id, conversation: proposal.conversation, toolName }),
    latencyMs: performance.now() - startedAt,
    // Under `upstream`, never a top-level `rules`: the rules page replays those as the built-in tools' facts.
    detail: {
      upstream: {
        definition_hash: call.hash,
        verdict: call.tool.verdict,
        ...(call.rules ? { rules: call.rules } : {}),
      },
    },
  };
}

/** The key the upstream sees: derived from the call key, so the same call proposed again carries the same one. */
const upstreamRow = (
  proposal: Proposal,
  id: string,
  toolName: string,
  call: Checked,
  key: string,
  status: "held" | "sending",
): UpstreamCallRow => ({
  toolCallId: id,
  tenantId: proposal.conversation.tenantId,
  serverId: call.tool.server.id,
  toolName,
  definitionHash: call.hash,
  idempotencyKey: sha256Hex(`${proposal.conversation.id}:${toolName}:${key}`),
  status,
});

async function recordEarly(
  conversation: ConversationFacts,
  id: string,
  toolName: string,
  result: Outcome,
  startedAt: number,
  detail?: Record<string, unknown>,
): Promise<void> {
  await recordCall(db, {
    id,
    tenantId: conversation.tenantId,
    conversationId: conversation.id,
    toolName,
    callKey: null,
    argsCanonical: null,
    argsHash: null,
    orderId: null,
    approvalId: null,
    outcome: result,
    latencyMs: performance.now() - startedAt,
    ...(detail ? { detail } : {}),
  });
}
