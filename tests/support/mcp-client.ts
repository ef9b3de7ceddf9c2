import { expect } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** The official MCP SDK client, connected to toolgate's /api/mcp for one conversation. */
export async function connectMcp(
  baseUrl: string,
  key: string,
  conversationId: string,
  fetchImpl?: typeof fetch,
): Promise<Client> {
  const client = new Client({ name: "toolgate-test-runtime", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(
    new URL(`/api/mcp?conversation=${encodeURIComponent(conversationId)}`, baseUrl),
    {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    },
  );
  await client.connect(transport);
  return client;
}

/** The tools a conversation opened with the defaults offers, in the registry's order: what `tools/list` answers. */
export const DEFAULT_TOOL_NAMES = [
  "get_order",
  "issue_refund",
  "update_shipping_address",
  "send_status_email",
  "get_call_status",
];

/** A held refund's MCP answer: not an error, the call to poll and when the request expires. Returns the call's id. */
export function expectHeldResult(answer: object): string {
  const held = answer as { isError?: unknown; structuredContent?: unknown };
  expect(held.isError).toBe(false);
  const { call_id: callId } = held.structuredContent as { call_id: string };
  expect(held.structuredContent).toEqual({
    status: "needs_approval",
    call_id: callId,
    expires_at: expect.any(String),
    message: `A supervisor must approve this call before it runs; it has not run. Do not propose it again. Tell the user it waits for a supervisor, and read its outcome with get_call_status (call_id ${callId}, wait_seconds up to 30).`,
  });
  return callId;
}
