import { notifyApprovalRequested } from "../approvals/notify/approval-requested";
import { notifyUpstreamRequested } from "../approvals/notify/upstream-requested";
import { waitForConversation } from "../live";
import { paymentPort } from "../payments/port";
import { proposeToolCall, type CallResult, type GatewayPorts, type Proposal } from "../gateway";
import { nearestOffered } from "../upstream/calls/exposure";
import { proposeUpstreamCall } from "../upstream/pipeline";

// Where the features meet the gateway: every entry (the HTTP API, a batch, MCP, the browser console) proposes a
// call through here, so each held call notifies the tenant's supervisors the same way, and a read of the
// conversation's calls can wait for them to change.
const PORTS: GatewayPorts = {
  notifyApprovalRequested,
  waitForChange: waitForConversation,
  payments: paymentPort,
  nearestTool: nearestOffered,
};

export async function proposeCall(proposal: Proposal): Promise<CallResult> {
  // An upstream server's tool (`<server>__<tool>`) is the second kind of tool, beside the built-in ones.
  return (await proposeUpstreamCall(proposal, notifyUpstreamRequested)) ?? proposeToolCall(proposal, PORTS);
}
