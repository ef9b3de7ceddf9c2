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

export interface ModelToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** The model-facing half, generated from the same zod schema the gateway enforces. */
export function modelDefinition(tool: ToolDefinition): ModelToolDefinition {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.schema) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, input_schema: schema };
}
