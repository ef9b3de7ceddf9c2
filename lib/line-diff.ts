import { diffLines } from "diff";

/** One line of a line diff: kept in both texts, only in the newer one, or only in the older one. */
export interface DiffLine {
  kind: "same" | "added" | "removed";
  text: string;
}

/**
 * Past this many lines changed the diff gives up and shows every old line, then every new one: the cost of Myers'
 * diff grows with the changes, and an upstream call's arguments are whatever its agent sent.
 */
const MAX_CHANGED_LINES = 1_000;

/** Every line ends with a line break, so a last line without one does not read as changed. */
const lines = (text: string) => (text === "" || text.endsWith("\n") ? text : `${text}\n`);

const split = (text: string, kind: DiffLine["kind"]): DiffLine[] =>
  text
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => ({ kind, text: line }));

/**
 * The line diff from `before` to `after` (the `diff` package's Myers diff), one entry per line: a rule set's
 * versions on the rules pages, an upstream tool's changed definition and an edit call's text on the approval card.
 */
export function lineDiff(before: string, after: string): DiffLine[] {
  const parts = diffLines(lines(before), lines(after), { maxEditLength: MAX_CHANGED_LINES });
  if (!parts) return [...(before ? split(before, "removed") : []), ...(after ? split(after, "added") : [])];
  return parts.flatMap((part) => split(part.value, part.added ? "added" : part.removed ? "removed" : "same"));
}
