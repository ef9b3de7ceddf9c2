import { describe, expect, it } from "vitest";
import { reconcileRefunds } from "@/lib/payments/reconcile/reconcile";
import { agentConversation } from "../../support/calls";
import { ownExternals } from "../../support/externals";
import { expectRefundInvariants } from "../../support/invariants";
import { connectMcp } from "../../support/mcp-client";
import { createWorld } from "../../support/world";
import { MCP_BASE, routeFetch } from "../../support/mcp-route";

// A refund the provider may have made, seen through the official MCP SDK client: the client checks every result
// against the tool's output schema, so a status the schema does not list would throw instead of reaching the model.

const externals = ownExternals();

describe("an MCP client meets a refund whose outcome is not known yet", () => {
  it("reads pending_confirmation (do not retry), follows it to ok after reconciliation, and the provider = books", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const client = await connectMcp(MCP_BASE, world.keys.agent, conversation, routeFetch);
    // Listing the tools is what makes the SDK client check results against their output schemas, as real runtimes do.
    await client.listTools();
    // The provider refunds, then never answers, on every attempt under the key: nobody can tell whether money moved.
    await externals.faults(
      Array.from({ length: 5 }, () => ({ mode: "timeout_after" as const })),
      true,
    );
    const uncertain = await client.callTool({
      name: "issue_refund",
      arguments: { order_id: world.orders.o1001, amount_cents: 4000, currency: "USD", reason: "damaged" },
    });
    const { call_id: callId } = uncertain.structuredContent as { call_id: string };
    expect(uncertain.structuredContent).toEqual({
      status: "pending_confirmation",
      call_id: callId,
      message: `This call was sent and its outcome is not confirmed yet: it may have happened. Do not propose it again. Read its outcome later with get_call_status (call_id ${callId}, wait_seconds up to 30).`,
    });
    expect(JSON.stringify(uncertain.content)).toContain("pending_confirmation");

    const pending = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
    expect(pending.structuredContent).toMatchObject({
      status: "ok",
      result: { call_id: callId, status: "pending_confirmation" },
    });

    await externals.faults([], true);
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    const settled = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
    expect(settled.structuredContent).toMatchObject({
      status: "ok",
      result: { call_id: callId, status: "ok", result: { amount_cents: 4000 } },
    });
    await client.close();
    await expectRefundInvariants([world.orders.o1001], (await externals.stats()).totalsByOrder);
  });
});
