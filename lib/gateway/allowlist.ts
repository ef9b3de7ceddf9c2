import { findTool } from "../tools/registry";
import type { ToolDefinition } from "../tools/types";
import { pass, stop, type StageResult } from "./outcome";

/** Stage 3: exact, case-sensitive name in the registry, then exposed in this conversation. */
export function checkAllowlist(name: string, exposed: readonly string[]): StageResult<ToolDefinition> {
  const tool = findTool(name);
  if (!tool) return stop("tool.unknown");
  if (!exposed.includes(tool.name)) return stop("tool.not-available");
  return pass(tool);
}
