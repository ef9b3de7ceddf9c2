import { describe, expect, it } from "vitest";
import { lineDiff } from "@/lib/line-diff";

// The one line diff of the app: a rule set's versions, an upstream tool's changed definition, an edit call's text.

describe("a line diff", () => {
  it("marks each line kept, removed or added, in the order a reader follows", () => {
    expect(lineDiff("a\nb", "a\nb\nc")).toEqual([
      { kind: "same", text: "a" },
      { kind: "same", text: "b" },
      { kind: "added", text: "c" },
    ]);
    expect(lineDiff("a\nb\nc", "a\nx\nc")).toEqual([
      { kind: "same", text: "a" },
      { kind: "removed", text: "b" },
      { kind: "added", text: "x" },
      { kind: "same", text: "c" },
    ]);
  });

  it("reads a last line without a break as unchanged, keeps blank lines, and handles empty texts", () => {
    expect(lineDiff("a\nb", "a\nb\n")).toEqual([
      { kind: "same", text: "a" },
      { kind: "same", text: "b" },
    ]);
    expect(lineDiff("a\n\nb", "a\nb")).toEqual([
      { kind: "same", text: "a" },
      { kind: "removed", text: "" },
      { kind: "same", text: "b" },
    ]);
    expect(lineDiff("", "x")).toEqual([{ kind: "added", text: "x" }]);
    expect(lineDiff("x", "")).toEqual([{ kind: "removed", text: "x" }]);
    expect(lineDiff("", "")).toEqual([]);
  });

  it("past a thousand changed lines shows the old text, then the new, instead of matching them", () => {
    const before = Array.from({ length: 1200 }, (_, index) => `old ${index}`).join("\n");
    const after = Array.from({ length: 1200 }, (_, index) => `new ${index}`).join("\n");
    const diff = lineDiff(`same\n${before}`, `same\n${after}`);
    expect(diff).toHaveLength(2402);
    expect(diff.slice(0, 2)).toEqual([
      { kind: "removed", text: "same" },
      { kind: "removed", text: "old 0" },
    ]);
    expect(diff.filter((line) => line.kind === "removed")).toHaveLength(1201);
    expect(diff.slice(1201, 1203)).toEqual([
      { kind: "added", text: "same" },
      { kind: "added", text: "new 0" },
    ]);
    // Within the bound, the same texts diff line by line.
    const small = lineDiff("same\nold 1\nold 2", "same\nnew 1\nnew 2");
    expect(small.map((line) => line.kind)).toEqual(["same", "removed", "removed", "added", "added"]);
  });
});
