import { notifyApprovalRequested } from "../approvals/notify/approval-requested";
import { notifyUpstreamRequested } from "../approvals/notify/upstream-requested";
import { keyAuthenticates } from "../auth/keys/sql";
import { db } from "../db";
import { waitForConversation, type ConversationWaiter } from "../live";
import { paymentPort } from "../payments/port";
import { proposeToolCall, type CallResult, type GatewayPorts, type Proposal } from "../gateway";
import { nearestOffered } from "../upstream/calls/exposure";
import { proposeUpstreamCall } from "../upstream/pipeline";

// Where the features meet the gateway: every entry (the HTTP API, a batch, MCP, the browser console) proposes a
// call through here, so each held call notifies the tenant's supervisors the same way, and a read of the
// conversation's calls can wait for them to change.
const PORTS: Omit<GatewayPorts, "waitForChange"> = {
  notifyApprovalRequested,
  payments: paymentPort,
  nearestTool: nearestOffered,
};

/**
 * A call proposed with a key whose read waited (`get_call_status` with `wait_seconds`) asks for the key again before
 * it answers, as the wait outlives the request's authentication: a key or connection revoked (or an agent
 * deactivated) meanwhile gets `revoked`, nothing of the call. A call without a key (the browser console) has none to lose.
 */
export function proposeCall(proposal: Proposal & { apiKeyId: null }): Promise<CallResult>;
export function proposeCall(proposal: Proposal): Promise<CallResult | "revoked">;
export async function proposeCall(proposal: Proposal): Promise<CallResult | "revoked"> {
  let waited = false;
  const waitForChange: ConversationWaiter = (conversationId, seconds, look, signal) => {
    waited = true;
    return waitForConversation(conversationId, seconds, look, signal);
  };
  // An upstream server's tool (`<server>__<tool>`) is the second kind of tool, beside the built-in ones.
  const call =
    (await proposeUpstreamCall(proposal, notifyUpstreamRequested)) ??
    (await proposeToolCall(proposal, { ...PORTS, waitForChange }));
  if (waited && proposal.apiKeyId !== null && !(await keyAuthenticates(db, proposal.apiKeyId))) return "revoked";
  return call;
}
