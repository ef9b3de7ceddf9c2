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
