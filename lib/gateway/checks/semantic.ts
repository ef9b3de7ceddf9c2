import { pass, stop, type StageResult } from "../../outcome";
import type { SchemaChecked } from "./schema";

/**
 * Stage 6: the checks that need no data: ranges, formats and enums of fields that carry a semantic code. The first
 * failure's code decides; every failing field is named, so one answer says all there is to fix.
 */
export function checkSemantics(checked: SchemaChecked): StageResult<Record<string, unknown>> {
  const [first] = checked.semanticFailures;
  if (first) return stop(first.code, { issues: checked.semanticFailures.map((failure) => failure.issue) });
  return pass(checked.args);
}
