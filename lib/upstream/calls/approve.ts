import { canonicalJson, sha256Hex } from "../../canonical";
import type { Tx } from "../../db";
import type { TenantPolicy } from "../../gateway";
import type { AgentPermissions } from "../../tools/scopes";
import { outcome, type Outcome } from "../../outcome";
import { splitName } from "../servers/definition";
import { forwardCall } from "./forward";
import { checkUpstreamRules, rulesStop } from "./rules";
import { findTool, findUpstreamCall, moveUpstreamCall } from "../sql";

/** The request as the approvals desk locked it. */
export interface HeldRequest {
  tenantId: string;
  conversationId: string;
  originCallId: string;
  toolName: string;
  argsHash: string;
}

export type UpstreamApproval =
  | { ok: true; outcome: Outcome; args: Record<string, unknown>; definitionHash: string }
  | { ok: false; reason: "binding" }
  | { ok: false; reason: "stopped"; outcome: Outcome; message: string };

/**
 * A supervisor approves a held upstream call: it must still be the call that was held (tool, conversation,
 * canonical arguments), its tool must still be reviewed under the very definition the call was held with, its
 * agent still allowed, and the tenant's live rules must not deny it now (a rule's hold is what the approval answers). Then the call is marked as being sent, with the outcome unknown, in the decision's own
 * transaction; `sendApproved` sends it once after the commit.
 */
export async function approveUpstream(
  tx: Tx,
  request: HeldRequest,
  agent: AgentPermissions | null,
  now: { agentId: string; policy: TenantPolicy },
): Promise<UpstreamApproval> {
  const call = await findUpstreamCall(tx, request.originCallId);
  const target = splitName(request.toolName);
  if (
    !call ||
    !target ||
    call.status !== "held" ||
    call.toolName !== request.toolName ||
    call.conversationId !== request.conversationId ||
    call.argsHash !== request.argsHash ||
    call.argsCanonical === null ||
    sha256Hex(call.argsCanonical) !== request.argsHash
  )
    return { ok: false, reason: "binding" };
  const args = JSON.parse(call.argsCanonical) as Record<string, unknown>;
  if (canonicalJson(args) !== call.argsCanonical) return { ok: false, reason: "binding" };
  const tool = await findTool(tx, request.tenantId, target.server, target.tool);
  if (!tool || tool.status !== "reviewed" || tool.reviewedHash !== call.definitionHash) {
    const message = `${request.toolName}'s definition changed since this call was held, so it cannot be approved as it was shown; nothing was sent. Once an admin has reviewed the change the agent may propose it again`;
    return {
      ok: false,
      reason: "stopped",
      message,
      outcome: outcome("upstream.definition-changed", { reason: message }),
    };
  }
  if (tool.verdict === "deny") {
    const message = `an admin has since denied ${request.toolName}; nothing was sent`;
    return { ok: false, reason: "stopped", message, outcome: outcome("tool.denied", { reason: message }) };
  }
  if (!agent || !agent.active || agent.role !== "AGENT") {
    const message = "the agent that proposed this call may no longer act; nothing was sent";
    return { ok: false, reason: "stopped", message, outcome: outcome("agent.not-authorized", { reason: message }) };
  }
  const rules = await checkUpstreamRules(tx, {
    tenantId: request.tenantId,
    agentId: now.agentId,
    policy: now.policy,
    server: target.server,
    tool: target.tool,
    definition: tool.reviewedDefinition!,
    hash: call.definitionHash,
    args,
  });
  const message =
    rules?.live.verdict === "failed"
      ? `the tenant's rules on ${request.toolName} cannot be evaluated (${rules.live.message}); nothing was sent`
      : `the tenant's rules now refuse ${request.toolName} with these arguments; nothing was sent`;
  const stopped = rulesStop(rules, message);
  if (stopped) return { ok: false, reason: "stopped", message, outcome: stopped };
  if (!(await moveUpstreamCall(tx, call.toolCallId, "held", "sending"))) return { ok: false, reason: "binding" };
  return { ok: true, outcome: outcome("upstream.outcome-unknown"), args, definitionHash: call.definitionHash };
}

/** After the approval committed: the one send. A failure before the answer is recorded leaves the outcome unknown. */
export const sendApproved = (toolCallId: string): Promise<Outcome> => forwardCall(toolCallId);
