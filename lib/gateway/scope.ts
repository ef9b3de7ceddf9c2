import type { ToolDefinition } from "../tools/types";
import { pass, stop, type StageResult } from "./outcome";

/** Stage 4: the conversation holds the tool's scope (fixed when it was opened, from the agent's permissions). */
export function checkScope(tool: ToolDefinition, held: readonly string[]): StageResult<ToolDefinition> {
  return held.includes(tool.scope) ? pass(tool) : stop("scope.missing");
}
