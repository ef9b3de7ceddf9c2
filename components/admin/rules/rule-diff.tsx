import type { DiffLine } from "@/lib/line-diff";

const MARK = { same: "  ", added: "+ ", removed: "- " } as const;

/** A line diff of two rule texts: every line, added ones marked + (green) and removed ones - (red, struck). */
export function RuleDiff({ lines, testId }: { lines: DiffLine[]; testId: string }) {
  if (lines.every((line) => line.kind === "same")) return <p className="muted">The texts are the same.</p>;
  return (
    <div className="rule-diff" data-testid={testId}>
      {lines.map((line, index) => (
        <div key={index} className={line.kind} data-testid={`${testId}-${line.kind}`}>
          {MARK[line.kind]}
          {line.text}
        </div>
      ))}
    </div>
  );
}
