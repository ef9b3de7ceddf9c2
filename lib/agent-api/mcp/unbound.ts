import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createMcpHandler, Server as ModernServer } from "@modelcontextprotocol/server";
import type { AuthenticatedAgent } from "../../auth/keys/api-keys";
import { findTool, TOOL_NAMES } from "../../tools/registry";
import { listedTools } from "./server";
import { noCustomerAnswer, SWITCH_TOOL, switchAnswer, switchToolDefinition } from "./switch-tool";

// A connection whose person has chosen no customer yet (issue 40, decision 022): it lists the tools it will have
// once they choose, and answers every call with where to choose; nothing reaches the gateway without a conversation.

/** A connection whose person has chosen no customer yet. */
export interface Unbound {
  agent: AuthenticatedAgent;
  issuer: string;
}

/** The tools the connection will have once a customer is chosen: those its granted scopes reach. */
function unboundTools(agent: AuthenticatedAgent) {
  const granted = agent.connection?.scopes ?? [];
  const tools = TOOL_NAMES.filter((name) => granted.includes(findTool(name)?.scope ?? ""));
  return [...listedTools({ tools }, () => ({})), switchToolDefinition];
}

const callAnswer = (unbound: Unbound, name: string) =>
  name === SWITCH_TOOL ? switchAnswer(unbound.issuer) : noCustomerAnswer(unbound.issuer);

/** Answers one request of a connection with no customer chosen, in either protocol revision (decision 020). */
export async function serveUnbound(request: Request, unbound: Unbound, body: unknown, modern: boolean) {
  if (modern) {
    const handler = createMcpHandler(
      () => {
        const server = new ModernServer({ name: "toolgate", version: "0.1.0" }, { capabilities: { tools: {} } });
        server.setRequestHandler("tools/list", async () => ({ tools: unboundTools(unbound.agent) }));
        server.setRequestHandler("tools/call", async (call) => callAnswer(unbound, call.params.name));
        return server;
      },
      { legacy: "reject" },
    );
    try {
      return await handler.fetch(request, { parsedBody: body });
    } finally {
      await handler.close();
    }
  }
  const server = new Server({ name: "toolgate", version: "0.1.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: unboundTools(unbound.agent) }));
  server.setRequestHandler(CallToolRequestSchema, async (call) => callAnswer(unbound, call.params.name));
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await server.close();
  }
}
