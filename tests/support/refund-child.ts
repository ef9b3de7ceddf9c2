import { findAgentConversation } from "@/lib/conversations/lookup";
import { proposeCall } from "@/lib/agent-api/propose";

// Runs one refund through the real gateway in its own process, so a test can SIGKILL it mid-flight.
// argv: userId tenantId conversationId orderId amountCents callKey

const [userId, tenantId, conversationId, orderId, amount, callKey] = process.argv.slice(2);
const found = await findAgentConversation({ userId, tenantId }, conversationId);
if (!found) throw new Error("no such conversation");
const envelope = JSON.stringify({
  name: "issue_refund",
  arguments: { order_id: orderId, amount_cents: Number(amount), currency: "USD", reason: "late" },
});
const call = await proposeCall({
  ...found,
  apiKeyId: null,
  callKey,
  raw: { bytes: new TextEncoder().encode(envelope), truncated: false },
});
console.log(JSON.stringify({ code: call.outcome.code }));
process.exit(0);
