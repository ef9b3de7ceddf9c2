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
});
