import { diffLines } from "diff";

/** One line of a line diff: kept in both texts, only in the newer one, or only in the older one. */
export interface DiffLine {
  kind: "same" | "added" | "removed";
  text: string;
}

/** Every line ends with a line break, so a last line without one does not read as changed. */
const lines = (text: string) => (text === "" || text.endsWith("\n") ? text : `${text}\n`);

/** The line diff from `before` to `after` (the `diff` package's Myers diff), one entry per line. */
export function lineDiff(before: string, after: string): DiffLine[] {
  return diffLines(lines(before), lines(after)).flatMap((part) => {
    const kind = part.added ? "added" : part.removed ? "removed" : "same";
    return part.value
      .replace(/\n$/, "")
      .split("\n")
      .map((text): DiffLine => ({ kind, text }));
  });
}
