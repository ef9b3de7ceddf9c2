import { findAnyTool } from "../../tools/registry";
import { readsCalls, type AnyTool } from "../../tools/types";
import { pass, stop, type StageResult } from "../../outcome";

/** Stage 3: exact, case-sensitive name in the registry, then exposed in this conversation (a calls tool is in all). */
export function checkAllowlist(name: string, exposed: readonly string[]): StageResult<AnyTool> {
  const tool = findAnyTool(name);
  if (!tool) return stop("tool.unknown");
  if (!readsCalls(tool) && !exposed.includes(tool.name)) return stop("tool.not-available");
  return pass(tool);
}
