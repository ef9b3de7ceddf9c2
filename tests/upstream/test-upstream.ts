import http from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";

// A small MCP server of the test's own, over Streamable HTTP behind a bearer secret: its description can change
// after review (a rug pull), it can cut the connection in the middle of a call, after receiving it, and it can list
// tools and answer calls as a hostile server would.

export interface TestUpstream {
  url: string;
  /** The bearer secret every request must carry. */
  secret: string;
  state: {
    description: string;
    /** Cut the connection of every call from now on, after recording it. */
    drop: boolean;
    /** Never answer a call from now on, after recording it (the connection stays open). */
    hang: boolean;
    received: { name: string; arguments: unknown; meta: Record<string, unknown> | undefined }[];
    /** Listed after its own two tools. */
    tools: Tool[];
    /** What every call is answered with from now on, after recording it, instead of the ticket's number. */
    answer: Record<string, unknown> | null;
  };
  close(): Promise<void>;
}

async function readBody(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
}

export async function startTestUpstream(secret: string): Promise<TestUpstream> {
  const state: TestUpstream["state"] = {
    description: "Creates a ticket in the team's tracker.",
    drop: false,
    hang: false,
    received: [],
    tools: [],
    answer: null,
  };
  const server = http.createServer(async (request, response) => {
    if (request.headers.authorization !== `Bearer ${secret}`) return void response.writeHead(401).end();
    if (request.method !== "POST") return void response.writeHead(405).end();
    const body = await readBody(request);
    const mcp = new Server({ name: "tickets", version: "1.0.0" }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: "create_ticket",
          description: state.description,
          inputSchema: {
            type: "object",
            properties: { title: { type: "string", title: "Title", description: "The ticket's one-line summary" } },
            required: ["title"],
            additionalProperties: false,
          },
          annotations: { readOnlyHint: false, destructiveHint: false },
        },
        {
          name: "count_tickets",
          description: "Counts the open tickets.",
          inputSchema: { type: "object", properties: {} },
          annotations: { readOnlyHint: true },
        },
        ...state.tools,
      ],
    }));
    mcp.setRequestHandler(CallToolRequestSchema, async (call) => {
      state.received.push({ name: call.params.name, arguments: call.params.arguments, meta: call.params._meta });
      if (state.hang) return new Promise<never>(() => undefined);
      if (state.drop) {
        response.socket?.destroy();
        return new Promise<never>(() => undefined);
      }
      return state.answer ?? { content: [{ type: "text", text: `ticket ${state.received.length}` }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcp.connect(transport);
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    secret,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
