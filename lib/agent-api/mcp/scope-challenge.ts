import { isPlainObject } from "../../canonical";
import { exposedTools } from "../../tools/registry";
import { readsCalls } from "../../tools/types";
import type { Bound } from "./server";

// Scope challenge handling (MCP authorization 2025-11-25): a connection that calls a tool of a scope the person
// did not grant it, where the conversation would allow that tool, gets a 403 `insufficient_scope` naming the scope
// before anything is proposed, so its client can ask the person for it. A scope the agent does not hold at all
// cannot be granted by asking, so that call still goes through the gateway and answers `not_allowed`.

/**
 * The first tools/call of the body whose scope the conversation, narrowed to the connection, lacks and the connection
 * could be granted: the tool and the scopes to ask for.
 */
export function scopeToAskFor(bound: Bound, body: unknown): { tool: string; scopes: string[] } | null {
  const connection = bound.agent.connection;
  if (!connection?.withheld?.length) return null;
  const tools = exposedTools(bound.conversation.tools);
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isPlainObject(message) || message.method !== "tools/call" || !isPlainObject(message.params)) continue;
    const tool = tools.find((candidate) => candidate.name === (message.params as { name?: unknown }).name);
    if (!tool || readsCalls(tool) || bound.conversation.scopes.includes(tool.scope)) continue;
    if (!connection.withheld.includes(tool.scope)) continue;
    return { tool: tool.name, scopes: [...connection.scopes, tool.scope] };
  }
  return null;
}
