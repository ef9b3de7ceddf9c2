import { lineDiff, type DiffLine } from "../../line-diff";
import type { UpstreamPreview } from "./preview";

// What a supervisor's card shows for a held upstream call, computed from the pinned schema and the arguments: every
// argument under its schema's title and description, long text in full with line numbers, and an edit's old and
// new text as a line diff. Pure, so the card, the admin page and the tests read the same words.

export interface ArgumentRow {
  key: string;
  label: string;
  description: string | null;
  /** Text shown line by line (numbered) when it has more than one line or is long; else one line. */
  lines: string[];
  numbered: boolean;
}

const LONG = 80;

function textOf(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** Every argument, those the schema names first in its order, then any other the call carried. */
export function argumentRows(preview: Pick<UpstreamPreview, "input_schema" | "arguments">): ArgumentRow[] {
  const properties = (preview.input_schema.properties ?? {}) as Record<
    string,
    { title?: unknown; description?: unknown }
  >;
  // Own properties only: an upstream's schema may name `constructor` or `toString`, which every object inherits.
  const keys = [
    ...Object.keys(properties).filter((key) => Object.hasOwn(preview.arguments, key)),
    ...Object.keys(preview.arguments)
      .filter((key) => !Object.hasOwn(properties, key))
      .sort(),
  ];
  return keys.map((key) => {
    const schema = (Object.hasOwn(properties, key) ? properties[key] : null) ?? {};
    const text = textOf(preview.arguments[key]);
    const lines = text.split("\n");
    return {
      key,
      label: typeof schema.title === "string" ? schema.title : key,
      description: typeof schema.description === "string" ? schema.description : null,
      lines,
      numbered: lines.length > 1 || text.length > LONG,
    };
  });
}

// The pairs edit tools use for the text they replace and its replacement.
const PAIRS: [string, string][] = [
  ["oldText", "newText"],
  ["old_text", "new_text"],
  ["old_string", "new_string"],
  ["old_str", "new_str"],
];

function pairOf(value: unknown): { before: string; after: string } | null {
  if (typeof value !== "object" || value === null) return null;
  const record = value as Record<string, unknown>;
  for (const [before, after] of PAIRS)
    if (typeof record[before] === "string" && typeof record[after] === "string")
      return { before: record[before] as string, after: record[after] as string };
  return null;
}

/** The edits an edit-style call carries (the arguments' own old/new pair, or a list of them), each as a diff. */
export function editDiffs(args: Record<string, unknown>): { where: string; lines: DiffLine[] }[] {
  const own = pairOf(args);
  const found = own ? [{ where: "the edit", ...own }] : [];
  for (const [key, value] of Object.entries(args)) {
    if (!Array.isArray(value)) continue;
    value.forEach((item, index) => {
      const pair = pairOf(item);
      if (pair) found.push({ where: `${key} ${index + 1}`, ...pair });
    });
  }
  return found.map(({ where, before, after }) => ({ where, lines: lineDiff(before, after) }));
}

const HINTS: [string, string, string][] = [
  ["readOnlyHint", "only reads", "may change things"],
  ["destructiveHint", "may destroy or overwrite", "does not destroy"],
  ["idempotentHint", "is safe to repeat", "may act again if repeated"],
  ["openWorldHint", "reaches outside systems", "stays within its own system"],
];

/** What the server's annotations claim, in words: a claim the card marks as the server's, never checked. */
export function claimWords(annotations: Record<string, unknown> | null): string[] {
  if (!annotations) return [];
  return HINTS.filter(([hint]) => typeof annotations[hint] === "boolean").map(([hint, yes, no]) =>
    annotations[hint] ? yes : no,
  );
}
