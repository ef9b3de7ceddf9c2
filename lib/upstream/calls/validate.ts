import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { RE2JS, RE2JSException } from "re2js";
import type { Issue } from "../../outcome";

// Arguments are checked against the reviewed definition's input schema with a real JSON Schema validator
// (docs/decisions/026-upstream-servers-behind-the-gateway.md), in the draft its `$schema` names. A schema that names
// none (draft 2020-12 is the MCP default since 2025-11-25; servers still write draft-07) is checked under both, and
// arguments must pass each that compiles: each draft ignores the other's keywords, so a reviewer who read
// `unevaluatedProperties: false` or `dependencies` finds it enforced either way. A schema neither draft compiles
// refuses every call: nothing unchecked is sent.

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
const validators = () => ({ draft7: new Ajv(options), draft2020: new Ajv2020(options) });
let ajv = validators();

// Compiled schemas by definition hash, which ajv keeps too; past the cap both start afresh, so a server that keeps
// changing its listing (each change compiled for the review page) cannot grow them without end.
const compiled = new Map<string, ValidateFunction[] | string>();
const MAX_COMPILED = 2_000;
const MAX_ISSUES = 20;
const MAX_PROBLEM_CHARS = 300;

/** In words why a draft's validator could not compile the schema (a pattern RE2 cannot run, a schema that is not one). */
function problemOf(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_PROBLEM_CHARS);
  return error instanceof RE2JSException
    ? `a pattern toolgate cannot run in linear time (no lookaround, no backreferences): ${message}`
    : `the schema validator cannot compile it: ${message}`;
}

/** The schema compiled under each draft it is checked in, or why none compiles it (the first draft's reason). */
function compile(schema: Record<string, unknown>): ValidateFunction[] | string {
  const named = typeof schema.$schema === "string" ? schema.$schema : null;
  const drafts =
    named === null ? [ajv.draft2020, ajv.draft7] : [named.includes("2020-12") ? ajv.draft2020 : ajv.draft7];
  const validators: ValidateFunction[] = [];
  let problem: string | null = null;
  for (const draft of drafts) {
    try {
      validators.push(draft.compile({ ...schema, $id: undefined }));
    } catch (error) {
      problem ??= problemOf(error);
    }
  }
  return validators.length > 0 ? validators : problem!;
}

function compiledFor(hash: string, schema: Record<string, unknown>): ValidateFunction[] | string {
  const known = compiled.get(hash);
  if (known) return known;
  if (compiled.size >= MAX_COMPILED) {
    compiled.clear();
    ajv = validators();
  }
  const fresh = compile(schema);
  compiled.set(hash, fresh);
  return fresh;
}

/** Why no call to a tool pinned as `hash` could be checked, and so sent; null when its input schema compiles. */
export function schemaProblem(hash: string, schema: Record<string, unknown>): string | null {
  const validate = compiledFor(hash, schema);
  return typeof validate === "string" ? validate : null;
}

/** The problems of `args` under the schema pinned as `hash` (compiled once per hash); empty when they fit. */
export function argumentIssues(hash: string, schema: Record<string, unknown>, args: unknown): Issue[] {
  const validate = compiledFor(hash, schema);
  if (typeof validate === "string")
    return [{ path: "", problem: "the tool's input schema cannot be checked, so no call to it is sent" }];
  const issues = new Map<string, Issue>();
  for (const draft of validate) {
    if (draft(args)) continue;
    for (const issue of (draft.errors ?? []).map(issueOf)) issues.set(`${issue.path}\n${issue.problem}`, issue);
  }
  return [...issues.values()].slice(0, MAX_ISSUES);
}

const issueOf = (error: ErrorObject): Issue => ({
  path: error.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join("."),
  problem: error.message ?? error.keyword,
});
