import type { z } from "zod";
import type { Issue } from "./outcome";

// Validation failures in words, one form for the model (the gateway's schema stage) and for people (a form's server
// action): where, and which rule.

const MAX_SEGMENT = 64;

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

/**
 * What is wrong with `args` by zod's `issue`: the paths and the rule broken, and at most the kind of the value sent
 * (a string, an array), never the value, so a model or a person can be told it without echoing what was sent.
 */
export function describeIssue(issue: z.core.$ZodIssue, args: unknown): Issue[] {
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

/** A path as `a.b[0].c`, each name cut to 64 characters; the whole input is "(arguments)". */
export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(arguments)";
  return path
    .map((segment, index) => {
      if (typeof segment === "number") return `[${segment}]`;
      const text = String(segment).slice(0, MAX_SEGMENT);
      return index === 0 ? text : `.${text}`;
    })
    .join("");
}
