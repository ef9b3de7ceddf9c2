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
});
