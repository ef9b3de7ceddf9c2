import { describe, expect, it } from "vitest";
import { argumentIssues } from "@/lib/upstream/calls/validate";

// The reviewed input schema as the validator applies it to an agent's arguments, whatever the upstream wrote in it.

describe("an upstream tool's arguments against its reviewed schema", () => {
  it("reads only the arguments' own properties, so a schema may name `constructor` or `toString`", () => {
    const schema = {
      type: "object",
      properties: { key: { type: "string" }, constructor: { type: "string" } },
      required: ["key"],
    };
    expect(argumentIssues("own-1", schema, { key: "mode" })).toEqual([]);
    expect(argumentIssues("own-1", schema, { key: "mode", constructor: 5 })).toEqual([
      { path: "constructor", problem: "must be string" },
    ]);
    expect(argumentIssues("own-2", { type: "object", required: ["toString"] }, {})).toEqual([
      { path: "", problem: "must have required property 'toString'" },
    ]);
  });

  it("checks an upstream's pattern in linear time: `^(a+)+$` against 10 KB of text takes milliseconds", () => {
    const schema = { type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } } };
    const started = performance.now();
    expect(argumentIssues("redos", schema, { q: `${"a".repeat(10_000)}!` })).toEqual([
      { path: "q", problem: 'must match pattern "^(a+)+$"' },
    ]);
    expect(argumentIssues("redos", schema, { q: "a".repeat(10_000) })).toEqual([]);
    // Backtracking takes seconds on 28 characters; a generous bound, since the failure is not a matter of speed.
    expect(performance.now() - started).toBeLessThan(100);
  });

  it("reads JavaScript's \\u escapes, and refuses every call of a schema whose pattern RE2 does not know", () => {
    const ascii = { type: "object", properties: { q: { type: "string", pattern: "^[\\u0020-\\u007e]*$" } } };
    expect(argumentIssues("ascii", ascii, { q: "plain text" })).toEqual([]);
    expect(argumentIssues("ascii", ascii, { q: "tab\there" })).toHaveLength(1);
    const escaped = { type: "object", properties: { q: { type: "string", pattern: "^\\\\u0041$" } } };
    expect(argumentIssues("escaped", escaped, { q: "\\u0041" })).toEqual([]);
    const lookahead = { type: "object", properties: { q: { type: "string", pattern: "^(?=a)\\w+$" } } };
    expect(argumentIssues("lookahead", lookahead, { q: "abc" })).toEqual([
      { path: "", problem: "the tool's input schema cannot be checked, so no call to it is sent" },
    ]);
  });

  it("checks a schema that names no draft under 2020-12 and draft-07 alike, so neither draft's keywords are ignored", () => {
    // 2020-12's unevaluatedProperties, which draft-07 would skip as an unknown keyword.
    const closed = { type: "object", properties: { a: { type: "string" } }, unevaluatedProperties: false };
    expect(argumentIssues("either-1", closed, { a: "x" })).toEqual([]);
    expect(argumentIssues("either-1", closed, { a: "x", evil: 1 })).toEqual([
      { path: "", problem: "must NOT have unevaluated properties" },
    ]);
    // draft-07's dependencies, which 2020-12 would skip.
    const paired = { type: "object", dependencies: { card: ["expiry"] } };
    expect(argumentIssues("either-2", paired, { card: "4242" })).toEqual([
      { path: "", problem: "must have property expiry when property card is present" },
    ]);
    // A failure both drafts see is said once; a draft-07 tuple, which 2020-12 cannot compile, is still checked.
    expect(argumentIssues("either-1", closed, { a: 5 })).toEqual([{ path: "a", problem: "must be string" }]);
    const tuple = { type: "array", items: [{ type: "string" }, { type: "integer" }] };
    expect(argumentIssues("either-3", tuple, ["x", 1])).toEqual([]);
    expect(argumentIssues("either-3", tuple, ["x", "y"])).toEqual([{ path: "1", problem: "must be integer" }]);
  });
});
