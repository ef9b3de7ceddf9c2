import { describe, expect, it } from "vitest";
import {
  compileUpstreamRules,
  evaluateUpstreamRules,
  namedUpstreamTools,
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

  it("hands a rule only what matches the declared type: a wrong type, an unsafe integer or an untyped property is left out", () => {
    const schema = {
      type: "object",
      properties: {
        name: { type: "string" },
        count: { type: "integer" },
        force: { type: "boolean" },
        maybe: { type: ["string", "null"] },
        bare: {},
        empty: null,
      },
    };
    expect(typedArguments(schema, { name: "a", count: 2, force: false, maybe: "x", bare: "y", empty: "z" })).toEqual({
      name: "a",
      count: 2,
      force: false,
    });
    expect(typedArguments(schema, { name: 7, count: "2", force: "true" })).toEqual({});
    expect(typedArguments(schema, { name: true, count: false })).toEqual({});
    expect(typedArguments({ properties: { path: { type: ["string"] } } }, { path: "/etc" })).toEqual({});
    expect(typedArguments(schema, { count: 1.5 })).toEqual({});
    expect(typedArguments(schema, { count: 2 ** 60 })).toEqual({});
    expect(typedArguments({ type: "object" }, { name: "a" })).toEqual({});
    expect(typedArguments({ type: "object", properties: null }, { name: "a" })).toEqual({});
  });

  it("a required argument reads as it is; an optional one only behind `has`, and the rule that skips it fails closed", () => {
    const rule = (id: string, condition: string) =>
      `@id("${id}") @hold("x") forbid (principal, action == Action::"files__write_file", resource) when { ${condition} };`;
    const facts = (args: Record<string, unknown>) => ({ agentId: "a", tool: write, server: "files", args });
    const required = compileUpstreamRules(
      "test:write:required",
      upstreamRulesFor(rulesOf(rule("etc", 'context.args.path like "/etc/*"')), write.name),
      [write],
    );
    expect(evaluateUpstreamRules(required, facts({ path: "/etc/passwd", content: "" }))).toEqual({
      verdict: "hold",
      rules: [{ id: "etc", reason: "x" }],
    });
    expect(evaluateUpstreamRules(required, facts({ path: "/tmp/a", content: "" }))).toEqual({ verdict: "allow" });

    const guarded = compileUpstreamRules(
      "test:write:guarded",
      upstreamRulesFor(rulesOf(rule("mode", "context.args has mode && context.args.mode == 511")), write.name),
      [write],
    );
    expect(evaluateUpstreamRules(guarded, facts({ path: "/a", content: "", mode: 511 }))).toMatchObject({
      verdict: "hold",
    });
    expect(evaluateUpstreamRules(guarded, facts({ path: "/a", content: "" }))).toEqual({ verdict: "allow" });

    const unguarded = compileUpstreamRules(
      "test:write:unguarded",
      upstreamRulesFor(rulesOf(rule("bare-mode", "context.args.mode == 511")), write.name),
      [write],
    );
    expect(unguarded).toEqual({ ok: false, message: expect.stringMatching(/^rule "bare-mode": .*mode/) });
    expect(evaluateUpstreamRules(unguarded, facts({ path: "/a", content: "", mode: 511 }))).toEqual({
      verdict: "failed",
      message: unguarded.ok ? "" : unguarded.message,
    });
  });

  it("lists each upstream tool the rules name once, for the schema they are checked against", () => {
    const rules = rulesOf(RULES).filter((rule) => rule.actions.every((action) => action.includes("__")));
    expect(namedUpstreamTools(rules).sort()).toEqual([write.name, merge.name].sort());
    expect(upstreamRulesFor(rulesOf(RULES), write.name).map((rule) => rule.id)).toEqual(["both"]);
  });

  it("names every rule that reads an argument the tool does not have, one after the other", () => {
    const rules = upstreamRulesFor(
      rulesOf(`
@id("reads-owner") @deny("owner") forbid (principal, action == Action::"files__write_file", resource) when { context.args.owner == "root" };
@id("reads-size") @deny("size") forbid (principal, action == Action::"files__write_file", resource) when { context.args.size > 10 };`),
      write.name,
    );
    const set = compileUpstreamRules("test:write:two-unknown", rules, [write]);
    expect(set.ok).toBe(false);
    expect(set.ok ? [] : set.message.split("; ").sort()).toEqual([
      expect.stringMatching(/^rule "reads-owner": .*`args\.owner`/),
      expect.stringMatching(/^rule "reads-size": .*`args\.size`/),
    ]);
  });

  it("a call the engine throws on is failed with the engine's message, never thrown into the gateway", () => {
    const set = compileUpstreamRules(
      "test:write:throws",
      upstreamRulesFor(
        rulesOf(
          '@id("etc") @hold("x") forbid (principal, action == Action::"files__write_file", resource) when { context.args.path like "/etc/*" };',
        ),
        write.name,
      ),
      [write],
    );
    const bigint = {
      agentId: "a",
      tool: write,
      server: 10n as unknown as string,
      args: { path: "/etc/x", content: "" },
    };
    expect(evaluateUpstreamRules(set, bigint)).toEqual({
      verdict: "failed",
      message: expect.stringMatching(/unwrap_throw/),
    });
  });
});
