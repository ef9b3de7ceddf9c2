import { z } from "zod";
import { getCallStatus } from "./get-call-status";
import { getOrder } from "./get-order";
import { issueRefund } from "./issue-refund";
import { sendStatusEmail } from "./send-status-email";
import { readsCalls, type AnyTool, type ToolDefinition } from "./types";
import { updateShippingAddress } from "./update-shipping-address";

const TOOLS = [getOrder, issueRefund, updateShippingAddress, sendStatusEmail] as ToolDefinition[];
// Exposed in every conversation, whatever tools it was opened with.
const CALLS_TOOLS = [getCallStatus] as AnyTool[];

const BY_NAME = new Map<string, AnyTool>([...TOOLS, ...CALLS_TOOLS].map((tool) => [tool.name, tool]));

/** The tools a conversation can be opened with. */
export const TOOL_NAMES: readonly string[] = TOOLS.map((tool) => tool.name);

/** Exact, case-sensitive lookup of a tool that acts on an order. */
export function findTool(name: string): ToolDefinition | undefined {
  const tool = BY_NAME.get(name);
  return tool && !readsCalls(tool) ? tool : undefined;
}

/** Exact, case-sensitive lookup of any tool; Map avoids prototype names such as "constructor" matching anything. */
export function findAnyTool(name: string): AnyTool | undefined {
  return BY_NAME.get(name);
}

/**
 * Of a conversation's tools, the ones its caller can call itself, whose calls it may therefore read back: each of the
 * registry's whose scope the conversation holds (narrowed to a connection's grant), and each upstream server's (the
 * only other names a conversation is opened with; they have no scope, and a connection granted less is not given them).
 */
export function callableTools(conversation: { tools: readonly string[]; scopes: readonly string[] }): string[] {
  return conversation.tools.filter((name) => {
    const tool = findTool(name);
    return tool ? conversation.scopes.includes(tool.scope) : true;
  });
}

/** The registry's tools a conversation's caller can call: its own whose scope it holds, then those every one has. */
export function callableRegistryTools(conversation: { tools: readonly string[]; scopes: readonly string[] }): string[] {
  return [...callableTools(conversation).filter((name) => findTool(name)), ...CALLS_TOOLS.map((tool) => tool.name)];
}

/** The tools a conversation exposes: the ones it was opened with, then the ones every conversation has. */
export function exposedTools(names: readonly string[]): AnyTool[] {
  return [...TOOLS.filter((tool) => names.includes(tool.name)), ...CALLS_TOOLS];
}

export const DEFINITION_FORMATS = ["toolgate", "openai", "anthropic", "mcp"] as const;
export type DefinitionFormat = (typeof DEFINITION_FORMATS)[number];

function jsonSchema(tool: AnyTool): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.schema) as Record<string, unknown>;
  return schema;
}

/**
 * The model-facing half, generated from the same zod schema the gateway enforces, in toolgate's own shape or
 * a provider's. OpenAI's is strict mode: every object closed
 * (`additionalProperties: false`) and every property required, which the schemas already are.
 */
export function providerDefinition(tool: AnyTool, format: DefinitionFormat): Record<string, unknown> {
  const schema = jsonSchema(tool);
  switch (format) {
    case "openai":
      return {
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: schema, strict: true },
      };
    case "mcp":
      return { name: tool.name, description: tool.description, inputSchema: schema };
    default:
      return { name: tool.name, description: tool.description, input_schema: schema };
  }
}
