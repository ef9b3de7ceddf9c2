import { z } from "zod";
import { getOrder } from "./get-order";
import { issueRefund } from "./issue-refund";
import { sendStatusEmail } from "./send-status-email";
import type { ToolDefinition } from "./types";
import { updateShippingAddress } from "./update-shipping-address";

const TOOLS = [getOrder, issueRefund, updateShippingAddress, sendStatusEmail] as ToolDefinition[];

const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

export const TOOL_NAMES: readonly string[] = TOOLS.map((tool) => tool.name);

/** Exact, case-sensitive lookup; Map avoids prototype names such as "constructor" matching anything. */
export function findTool(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name);
}

/** The tools a conversation exposes, in registry order. */
export function exposedTools(names: readonly string[]): ToolDefinition[] {
  return TOOLS.filter((tool) => names.includes(tool.name));
}

export const DEFINITION_FORMATS = ["toolgate", "openai", "anthropic", "mcp"] as const;
export type DefinitionFormat = (typeof DEFINITION_FORMATS)[number];

function jsonSchema(tool: ToolDefinition): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.schema) as Record<string, unknown>;
  return schema;
}

/**
 * The model-facing half, generated from the same zod schema the gateway enforces, in toolgate's own shape or
 * a provider's. OpenAI's is strict mode: every object closed
 * (`additionalProperties: false`) and every property required, which the schemas already are.
 */
export function providerDefinition(tool: ToolDefinition, format: DefinitionFormat): Record<string, unknown> {
  const schema = jsonSchema(tool);
  switch (format) {
    case "openai":
      return { type: "function", function: { name: tool.name, description: tool.description, parameters: schema, strict: true } };
    case "mcp":
      return { name: tool.name, description: tool.description, inputSchema: schema };
    default:
      return { name: tool.name, description: tool.description, input_schema: schema };
  }
}
