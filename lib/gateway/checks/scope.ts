import { readsCalls, type AnyTool } from "../../tools/types";
import { pass, stop, type StageResult } from "../../outcome";

/**
 * Stage 4: the conversation holds the tool's scope (fixed when it was opened, from the agent's permissions). A tool
 * that reads only the conversation's own calls needs none.
 */
export function checkScope(tool: AnyTool, held: readonly string[]): StageResult<AnyTool> {
  if (readsCalls(tool)) return pass(tool);
  return held.includes(tool.scope) ? pass(tool) : stop("scope.missing");
}
