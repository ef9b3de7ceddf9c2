import { db } from "../../db";
import { nearestName } from "../../nearest-name";
import { callableRegistryTools } from "../../tools/registry";
import { namespaced, providerName, resolveOffered, splitName, type PinnedDefinition } from "../servers/definition";
import { findTenantTools, type ToolWithServer } from "../sql";

// Upstream tools reach agents only once reviewed, and only in conversations opened with them by name, beside the
// built-in tools and under the same per-conversation exposure.

export const isUpstreamName = (name: string) => splitName(name) !== null;

/** Of the names a conversation is opened with, the upstream tools the tenant has reviewed and not denied. */
export async function exposableTools(tenantId: string, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const tools = await findTenantTools(db, tenantId, names);
  return tools.filter(exposable).map((tool) => namespaced(tool.server.name, tool.name));
}

const exposable = (tool: ToolWithServer) =>
  tool.status === "reviewed" && tool.reviewedDefinition !== null && tool.verdict !== "deny";

/** The tenant's reviewed upstream tools that can be held, by their namespaced names (the desk's tool filter). */
export async function holdableToolNames(tenantId: string): Promise<string[]> {
  const tools = await findTenantTools(db, tenantId);
  return tools
    .filter((tool) => exposable(tool) && tool.verdict === "hold")
    .map((tool) => namespaced(tool.server.name, tool.name));
}

export type UpstreamFormat = "toolgate" | "openai" | "anthropic" | "mcp";

/**
 * The conversation's upstream tools as a provider or MCP lists them, from their reviewed definitions (never the
 * server's current listing): the description in full, the pinned input schema, and for MCP the title, output
 * schema and annotations the server declared. Outside toolgate's own format each is named as a provider takes it
 * (`providerName`); a tool whose provider name a call would resolve to another of the conversation's tools is left
 * out, since a call by it would not reach the tool described.
 */
export async function upstreamDefinitions(
  conversation: { tenantId: string; tools: readonly string[] },
  format: UpstreamFormat,
): Promise<Record<string, unknown>[]> {
  const tools = (await listedUpstream(conversation)).map((tool) => {
    const name = namespaced(tool.server.name, tool.name);
    return { name, offered: format === "toolgate" ? name : providerName(name), definition: tool.reviewedDefinition! };
  });
  // Judged against every name of the conversation, as a call is (`resolveOffered`), not only the tools listed now: a
  // twin quarantined or denied since the conversation opened still takes its name, and would get the call.
  return tools
    .filter((tool) => resolveOffered(conversation.tools, tool.offered) === tool.name)
    .map((tool) => definitionAs(tool.offered, tool.definition, format));
}

/** The conversation's upstream tools its listing offers: those it was opened with, reviewed and not denied now. */
async function listedUpstream(conversation: { tenantId: string; tools: readonly string[] }): Promise<ToolWithServer[]> {
  const names = conversation.tools.filter(isUpstreamName);
  if (names.length === 0) return [];
  return (await findTenantTools(db, conversation.tenantId, names)).filter(exposable);
}

/**
 * The conversation's tool a model most likely meant by `called`, a name it is not offered, under a name a listing gives
 * it (toolgate's own, or a provider's); null when none is near. Only the tools the conversation can call are looked at,
 * so a misspelling tells nothing of a tool it was not given. Read on that refusal alone, never for a call that runs.
 */
export async function nearestOffered(
  conversation: { tenantId: string; tools: readonly string[]; scopes: readonly string[] },
  called: string,
): Promise<string | null> {
  const upstream = (await listedUpstream(conversation)).flatMap((tool) => {
    const name = namespaced(tool.server.name, tool.name);
    const offered = providerName(name);
    return offered !== name && resolveOffered(conversation.tools, offered) === name ? [name, offered] : [name];
  });
  return nearestName(called, [...callableRegistryTools(conversation), ...upstream]);
}

function definitionAs(name: string, pinned: PinnedDefinition, format: UpstreamFormat): Record<string, unknown> {
  const description = pinned.description ?? pinned.title ?? name;
  switch (format) {
    case "openai":
      // Not strict mode: an upstream schema is the server's, not one toolgate closed.
      return { type: "function", function: { name, description, parameters: pinned.inputSchema, strict: false } };
    case "mcp":
      return {
        name,
        ...(pinned.title ? { title: pinned.title } : {}),
        description,
        inputSchema: pinned.inputSchema,
        ...(pinned.annotations ? { annotations: pinned.annotations } : {}),
      };
    default:
      return { name, description, input_schema: pinned.inputSchema };
  }
}
