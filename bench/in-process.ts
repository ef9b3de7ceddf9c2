import { proposeCall } from "../lib/agent-api/propose";
import { authenticateForConversation } from "../lib/conversations/authenticate";

// Tool calls through the gateway in this process, as the agent API's route makes them. Apart from common.ts so that
// the benchmarks that only drive app instances over HTTP never load the gateway.

const encoder = new TextEncoder();

/** One call as the route runs it: the key and conversation lookup, then the gateway; throws unless it answers `expected`. */
export async function callAsRoute(call: {
  key: string;
  conversationId: string;
  body: string;
  callKey: string | null;
  expected: string;
}): Promise<void> {
  const authenticated = await authenticateForConversation(`Bearer ${call.key}`, call.conversationId, {
    countCall: true,
  });
  if (!authenticated?.found) throw new Error("the benchmark's key or conversation did not authenticate");
  const result = await proposeCall({
    ...authenticated.found,
    apiKeyId: authenticated.agent.apiKeyId,
    callKey: call.callKey,
    raw: { bytes: encoder.encode(call.body), truncated: false },
    rateCounted: authenticated.rateCounted,
  });
  const code = result === "revoked" ? result : result.outcome.code;
  if (code !== call.expected) throw new Error(`a call answered ${code}, expected ${call.expected}`);
}

/** An executed refund of 1.00 USD of `order`, as the route runs it. */
export function refundAsRoute(key: string, conversationId: string, order: string, callKey: string, reason: string) {
  const body = JSON.stringify({
    name: "issue_refund",
    arguments: { order_id: order, amount_cents: 100, currency: "USD", reason },
  });
  return callAsRoute({ key, conversationId, body, callKey, expected: "refund.issued" });
}
