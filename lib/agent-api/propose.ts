import { notifyApprovalRequested } from "../approvals/notify";
import { proposeToolCall, type CallResult, type GatewayPorts, type Proposal } from "../gateway/pipeline";

// Where the features meet the gateway: every entry (the HTTP API, a batch, MCP, the browser console) proposes a
// call through here, so each held call notifies the tenant's supervisors the same way.
const PORTS: GatewayPorts = { notifyApprovalRequested };

export function proposeCall(proposal: Proposal): Promise<CallResult> {
  return proposeToolCall(proposal, PORTS);
}
