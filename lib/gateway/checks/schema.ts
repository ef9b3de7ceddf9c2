import type { z } from "zod";
import type { ToolFace } from "../../tools/types";
import { isPlainObject } from "../../canonical";
import { describeIssue, formatPath } from "../../issue-words";
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
    if (semantic) semanticFailures.push({ code: semantic, issue: describeIssue(issue, args)[0] });
    else schemaIssues.push(...describeIssue(issue, args));
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
