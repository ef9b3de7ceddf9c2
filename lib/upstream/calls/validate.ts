import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Issue } from "../../outcome";

// Arguments are checked against the reviewed definition's input schema with a real JSON Schema validator
// (docs/decisions/026-upstream-servers-behind-the-gateway.md): draft 2020-12 when the schema says so (the MCP default since
// 2025-11-25), draft-07 otherwise. A schema the validator cannot compile refuses every call: nothing unchecked is sent.

// Own properties only: a schema may name `constructor` or `toString`, which every arguments object inherits.
const draft7 = new Ajv({ strict: false, allErrors: true, validateFormats: false, ownProperties: true });
const draft2020 = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, ownProperties: true });

const compiled = new Map<string, ValidateFunction | null>();
const MAX_ISSUES = 20;

function compile(schema: Record<string, unknown>): ValidateFunction | null {
  const is2020 = typeof schema.$schema === "string" && schema.$schema.includes("2020-12");
  try {
    return (is2020 ? draft2020 : draft7).compile({ ...schema, $id: undefined });
  } catch {
    return null;
  }
}

/** The problems of `args` under the schema pinned as `hash` (compiled once per hash); empty when they fit. */
export function argumentIssues(hash: string, schema: Record<string, unknown>, args: unknown): Issue[] {
  if (!compiled.has(hash)) compiled.set(hash, compile(schema));
  const validate = compiled.get(hash);
  if (!validate) return [{ path: "", problem: "the tool's input schema cannot be checked, so no call to it is sent" }];
  if (validate(args)) return [];
  return (validate.errors ?? []).slice(0, MAX_ISSUES).map(issueOf);
}

const issueOf = (error: ErrorObject): Issue => ({
  path: error.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join("."),
  problem: error.message ?? error.keyword,
});
