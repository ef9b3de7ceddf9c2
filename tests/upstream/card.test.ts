import { describe, expect, it } from "vitest";
import { argumentRows, claimWords, editDiffs } from "@/lib/upstream/calls/card";

// The held upstream call's card, from the pinned schema: titles, numbered long text, edits as diffs, claims.

describe("the upstream card's words", () => {
  it("titles each argument from the schema, schema order first, and numbers long or multi-line text", () => {
    const rows = argumentRows({
      input_schema: {
        properties: {
          path: { title: "File", description: "Where to write" },
          content: { description: "What to write" },
        },
      },
      arguments: { content: "a\nb\nc", path: "/tmp/x", extra: 1 },
    });
    expect(rows).toEqual([
      { key: "path", label: "File", description: "Where to write", lines: ["/tmp/x"], numbered: false },
      { key: "content", label: "content", description: "What to write", lines: ["a", "b", "c"], numbered: true },
      { key: "extra", label: "extra", description: null, lines: ["1"], numbered: false },
    ]);
    const long = argumentRows({ input_schema: {}, arguments: { text: "x".repeat(200) } });
    expect(long[0]).toMatchObject({ numbered: true, lines: ["x".repeat(200)] });
  });

  it("reads only the schema's and the arguments' own keys, whatever names an upstream's schema uses", () => {
    const schema = { properties: { title: { type: "string" }, constructor: { description: "Optional override" } } };
    expect(argumentRows({ input_schema: schema, arguments: { title: "x" } })).toEqual([
      { key: "title", label: "title", description: null, lines: ["x"], numbered: false },
    ]);
    expect(
      argumentRows({ input_schema: schema, arguments: { constructor: "c", toString: "t", title: "x" } }).map((row) => [
        row.key,
        row.description,
        row.lines,
      ]),
    ).toEqual([
      ["title", null, ["x"]],
      ["constructor", "Optional override", ["c"]],
      ["toString", null, ["t"]],
    ]);
  });

  it("shows server-filesystem's edit_file edits as line diffs", () => {
    const diffs = editDiffs({
      path: "/tmp/a.txt",
      edits: [{ oldText: "one\ntwo\nthree", newText: "one\n2\nthree" }],
    });
    expect(diffs).toEqual([
      {
        where: "edits 1",
        lines: [
          { kind: "same", text: "one" },
          { kind: "removed", text: "two" },
          { kind: "added", text: "2" },
          { kind: "same", text: "three" },
        ],
      },
    ]);
    expect(editDiffs({ old_string: "a", new_string: "b" })[0].where).toBe("the edit");
    expect(editDiffs({ path: "x" })).toEqual([]);
  });

  it("words the annotations as claims", () => {
    expect(claimWords({ readOnlyHint: false, destructiveHint: true, title: "x" })).toEqual([
      "may change things",
      "may destroy or overwrite",
    ]);
    expect(claimWords(null)).toEqual([]);
  });
});
