import { describe, expect, it } from "vitest";
import {
  compileUpstreamRules,
  evaluateUpstreamRules,
  typedArguments,
  upstreamRulesFor,
} from "@/lib/policy-rules/upstream";
import { validateRules } from "@/lib/policy-rules/validate";

// The upstream rules' own schema (docs/decisions/026, amendment): arguments typed from the pinned input schema.

const write = {
  name: "files__write_file",
  hash: "h-write",
  inputSchema: {
    type: "object",
    properties: { path: { type: "string" }, content: { type: "string" }, mode: { type: "integer" } },
    required: ["path", "content"],
  },
};
const merge = {
  name: "github__merge_pull_request",
  hash: "h-merge",
  inputSchema: {
    type: "object",
    properties: {
      base: { type: "string" },
      number: { type: "integer" },
      squash: { type: "boolean" },
      ratio: { type: "number" },
      labels: { type: "array" },
    },
    required: ["number"],
  },
};

const RULES = `
@id("no-main") @deny("merge-to-main")
forbid (principal, action == Action::"github__merge_pull_request", resource)
when { context.args has base && context.args.base == "main" && context.args.number > 0 };

@id("both") @hold("Squashes and world-writable files wait.")
forbid (principal, action in [Action::"github__merge_pull_request", Action::"files__write_file"], resource)
when { context.server == "github" && context.args has squash && context.args.squash };

@id("orders") @hold("Old orders wait.")
forbid (principal, action, resource) when { resource.age_days > 90 };
`;

const rulesOf = (text: string) => {
  const validated = validateRules(text);
  if (!validated.ok) throw new Error(validated.errors.join("\n"));
  return validated.rules;
};

describe("rules on upstream tools", () => {
  it("types strings, integers and booleans; leaves other arguments out", () => {
    expect(
      typedArguments(merge.inputSchema, { base: "main", number: 7, squash: true, ratio: 0.5, labels: ["x"] }),
    ).toEqual({ base: "main", number: 7, squash: true });
  });

  it("validates against every tool a rule names and decides deny, hold and allow", () => {
    const rules = upstreamRulesFor(rulesOf(RULES), merge.name);
    expect(rules.map((rule) => rule.id)).toEqual(["no-main", "both"]);
    const set = compileUpstreamRules("test:merge:1", rules, [merge, write]);
    const facts = (args: Record<string, unknown>) => ({ agentId: "a", tool: merge, server: "github", args });
    expect(evaluateUpstreamRules(set, facts({ base: "main", number: 3 }))).toMatchObject({
      verdict: "deny",
      rules: [{ id: "no-main", code: "merge-to-main" }],
    });
    expect(evaluateUpstreamRules(set, facts({ base: "dev", number: 3, squash: true }))).toMatchObject({
      verdict: "hold",
      rules: [{ id: "both" }],
    });
    expect(evaluateUpstreamRules(set, facts({ base: "dev", number: 3 }))).toEqual({ verdict: "allow" });
  });

  it("fails closed when a tool a rule names is not reviewed, or a rule reads an argument left out", () => {
    const rules = upstreamRulesFor(rulesOf(RULES), merge.name);
    const missing = compileUpstreamRules("test:merge:2", rules, [merge]);
    expect(
      evaluateUpstreamRules(missing, { agentId: "a", tool: merge, server: "github", args: { number: 1 } }),
    ).toMatchObject({
      verdict: "failed",
    });
    const untyped = upstreamRulesFor(
      rulesOf(
        '@id("r") @deny("r") forbid (principal, action == Action::"github__merge_pull_request", resource) when { context.args.ratio == "0.5" };',
      ),
      merge.name,
    );
    const set = compileUpstreamRules("test:merge:3", untyped, [merge]);
    expect(set).toMatchObject({ ok: false, message: expect.stringContaining("ratio") });
  });
});
