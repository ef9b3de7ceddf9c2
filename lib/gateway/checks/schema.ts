import type { z } from "zod";
import type { ToolFace } from "../../tools/types";
import { isPlainObject } from "../../canonical";
import { pass, stop, type Code, type Issue, type StageResult } from "../../outcome";

// Fields the host owns. Compared case- and separator-insensitively, so "Customer-ID" and "customerId" count too.
const HOST_OWNED = [
  "customer_id",
  "tenant_id",
  "agent_id",
  "user_id",
  "approved",
  "approval_id",
  "idempotency_key",
  "version",
];
const HOST_OWNED_FOLDED = new Set(HOST_OWNED.map(fold));

const VALUE_PROBLEMS = new Set(["too_small", "too_big", "invalid_format", "invalid_value", "not_multiple_of"]);
const MAX_ISSUES = 10;
const MAX_SEGMENT = 64;

export interface SemanticFailure {
  code: Code;
  issue: Issue;
}

export interface SchemaChecked {
  args: Record<string, unknown>;
  /** Value-level failures on fields that carry a semantic code, with what is wrong; the semantic stage reports the first. */
  semanticFailures: SemanticFailure[];
}

/** Stage 5: normalize strings once, refuse host-owned fields, then strict types with no coercion. */
export function checkSchema(tool: ToolFace, raw: Record<string, unknown>): StageResult<SchemaChecked> {
  const args = normalize(raw) as Record<string, unknown>;

  const hostOwned = hostOwnedPaths(args, []);
  if (hostOwned.length > 0) {
    return stop("argument.host-owned", {
      issues: hostOwned.slice(0, MAX_ISSUES).map((path) => ({ path, problem: "set by the host: leave it out" })),
    });
  }

  const parsed = tool.schema.safeParse(args);
  if (parsed.success) return pass({ args: parsed.data as Record<string, unknown>, semanticFailures: [] });

  const schemaIssues: Issue[] = [];
  const semanticFailures: SemanticFailure[] = [];
  for (const issue of parsed.error.issues) {
    const semantic = semanticCode(tool, issue, args);
    if (semantic) semanticFailures.push({ code: semantic, issue: describe(issue, args)[0] });
    else schemaIssues.push(...describe(issue, args));
  }
  if (schemaIssues.length > 0) return stop("schema.invalid", { issues: schemaIssues.slice(0, MAX_ISSUES) });
  return pass({ args, semanticFailures });
}

/** NFKC and trimmed ends for every string value, keys untouched; the normalized form is used from here on. */
function normalize(value: unknown): unknown {
  if (typeof value === "string") return value.normalize("NFKC").trim();
  if (Array.isArray(value)) return value.map(normalize);
  if (isPlainObject(value)) {
    const result: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      Object.defineProperty(result, key, {
        value: normalize(inner),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return result;
  }
  return value;
}

function fold(key: string): string {
  return key
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[-_\s]/g, "");
}

function hostOwnedPaths(value: unknown, path: (string | number)[]): string[] {
  if (Array.isArray(value)) return value.flatMap((inner, index) => hostOwnedPaths(inner, [...path, index]));
  if (!isPlainObject(value)) return [];
  return Object.entries(value).flatMap(([key, inner]) => [
    ...(HOST_OWNED_FOLDED.has(fold(key)) ? [formatPath([...path, key])] : []),
    ...hostOwnedPaths(inner, [...path, key]),
  ]);
}

function semanticCode(tool: ToolFace, issue: z.core.$ZodIssue, args: Record<string, unknown>): Code | null {
  if (issue.path.length !== 1 || !VALUE_PROBLEMS.has(issue.code)) return null;
  const field = String(issue.path[0]);
  const code = tool.semanticCodes?.[field];
  if (!code) return null;
  // An enum value of the wrong type (a number for a string enum) is a type error, not a semantic one.
  if (issue.code === "invalid_value" && typeof args[field] !== "string") return null;
  return code;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "an array",
};

/** A bound as the model reads it: a string's in characters, an array's in items, a number's bare. */
function sized(bound: number | bigint, origin: string): string {
  const unit = origin === "string" ? "character" : origin === "array" ? "item" : null;
  return unit ? `${bound} ${unit}${Number(bound) === 1 ? "" : "s"}` : String(bound);
}

/** The value at `path` of the arguments, or undefined when there is none. */
function valueAt(args: unknown, path: readonly PropertyKey[]): unknown {
  let value = args;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/** What a value is, in the words of `TYPE_NAMES` ("a string"), never what it says. */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a number with a fraction";
  return TYPE_NAMES[typeof value] ?? typeof value;
}

/** Paths and the rule broken, and at most the kind of the value sent (a string, an array), never the value. */
function describe(issue: z.core.$ZodIssue, args: Record<string, unknown>): Issue[] {
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((key) => ({
        path: formatPath([...issue.path, key]),
        problem: "unknown field: leave it out",
      }));
    case "invalid_type": {
      const expected = TYPE_NAMES[issue.expected] ?? `of type ${issue.expected}`;
      const sent = valueAt(args, issue.path);
      return [
        {
          path: formatPath(issue.path),
          problem: sent === undefined ? `is required: ${expected}` : `must be ${expected}, not ${kindOf(sent)}`,
        },
      ];
    }
    case "too_small":
      return [
        {
          path: formatPath(issue.path),
          problem:
            issue.origin === "string" && Number(issue.minimum) === 1
              ? "must not be empty"
              : `must be at least ${sized(issue.minimum, issue.origin)}`,
        },
      ];
    case "too_big":
      return [{ path: formatPath(issue.path), problem: `must be at most ${sized(issue.maximum, issue.origin)}` }];
    case "invalid_format":
      return [
        {
          path: formatPath(issue.path),
          problem:
            issue.format === "regex" && "pattern" in issue && typeof issue.pattern === "string"
              ? `must match the pattern ${issue.pattern.replace(/^\/(.*)\/[a-z]*$/, "$1")}`
              : `must be a valid ${issue.format}`,
        },
      ];
    case "not_multiple_of":
      return [{ path: formatPath(issue.path), problem: `must be a multiple of ${issue.divisor}` }];
    case "invalid_value": {
      const choices = `one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
      // Zod reports a missing field of a list of choices as a wrong value; the model must hear that it left it out.
      const missing = valueAt(args, issue.path) === undefined;
      return [{ path: formatPath(issue.path), problem: missing ? `is required: ${choices}` : `must be ${choices}` }];
    }
    default:
      return [{ path: formatPath(issue.path), problem: "is invalid" }];
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(arguments)";
  return path
    .map((segment, index) => {
      if (typeof segment === "number") return `[${segment}]`;
      const text = String(segment).slice(0, MAX_SEGMENT);
      return index === 0 ? text : `.${text}`;
    })
    .join("");
}
