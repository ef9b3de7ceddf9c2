import { pass, stop, type StageResult } from "../../outcome";
import type { SchemaChecked } from "./schema";

/** Stage 6: the checks that need no data: ranges, formats and enums of fields that carry a semantic code. */
export function checkSemantics(checked: SchemaChecked): StageResult<Record<string, unknown>> {
  const [first] = checked.semanticFailures;
  if (first) return stop(first.code, { issues: [first.issue] });
  return pass(checked.args);
}
