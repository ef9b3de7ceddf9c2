import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { RE2JS } from "re2js";
import type { Issue } from "../../outcome";

// Arguments are checked against the reviewed definition's input schema with a real JSON Schema validator
// (docs/decisions/026-upstream-servers-behind-the-gateway.md): draft 2020-12 when the schema says so (the MCP default since
// 2025-11-25), draft-07 otherwise. A schema the validator cannot compile refuses every call: nothing unchecked is sent.

/** JavaScript's `\uXXXX` and `\u{X}` as RE2 spells them; an escaped backslash is kept as it is. */
const re2Syntax = (pattern: string) =>
  pattern.replace(/\\(\\|u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4}))/g, (escape, _, braced?: string, four?: string) =>
    braced || four ? `\\x{${braced ?? four}}` : escape,
  );

/**
 * An upstream's `pattern` runs on RE2, in time linear in the text: `^(a+)+$` cannot stall the event loop. A pattern
 * RE2 does not know (lookaround, backreferences) makes the schema one that cannot be compiled.
 */
const linearRegExp = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(re2Syntax(pattern));
    // ajv keeps one compiled pattern per `toString()`, as it does a RegExp's.
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/` };
  },
  { code: "linearRegExp" },
);

// Own properties only: a schema may name `constructor` or `toString`, which every arguments object inherits.
const options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  ownProperties: true,
  code: { regExp: linearRegExp },
} as const;
const draft7 = new Ajv(options);
const draft2020 = new Ajv2020(options);

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
