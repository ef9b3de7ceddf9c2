import type { Defect } from "./defect";

/** The seeded defects of lib/upstream/. */
export const defects: Defect[] = [
  {
    name: "upstream pinning",
    file: "lib/upstream/servers/sync.ts",
    find: 'pinned.reviewedHash === hash ? "reviewed" : pinned.reviewedHash === null ? "pending-review" : "quarantined";',
    replace: '"reviewed";',
    testFile: "tests/upstream/pinning.integration.test.ts",
    test: "quarantines a reviewed tool whose description changed, and refuses the call held under the old one",
  },
  {
    name: "upstream approval binds the definition",
    file: "lib/upstream/calls/approve.ts",
    find: 'if (!tool || tool.status !== "reviewed" || tool.reviewedHash !== call.definitionHash) {',
    replace: "if (!tool) {",
    testFile: "tests/upstream/pinning.integration.test.ts",
    test: "quarantines a reviewed tool whose description changed, and refuses the call held under the old one",
  },
  {
    name: "upstream schema validation",
    file: "lib/upstream/pipeline.ts",
    find: 'if (issues.length > 0) return { ok: false, outcome: outcome("schema.invalid", { issues }) };',
    replace: "",
    testFile: "tests/upstream/filesystem.integration.test.ts",
    test: "refuses arguments outside the pinned input schema before anything is held or sent",
  },
  {
    name: "upstream forward once",
    file: "lib/upstream/calls/forward.ts",
    find: "    if (!answered(error)) {",
    replace:
      "    const resent = await client.callTool({ name: target.tool, arguments: JSON.parse(call.argsCanonical) }).then(\n      () => false,\n      () => true,\n    );\n    if (!answered(error) && resent) {",
    testFile: "tests/upstream/pinning.integration.test.ts",
    test: "leaves a call whose connection was cut `unknown`, received once, never sent again; a supervisor resolves it",
  },
  {
    name: "upstream rules deny",
    file: "lib/upstream/pipeline.ts",
    find: "  if (stopped) return early(stopped, {}, { upstream: { rules } });",
    replace: "",
    testFile: "tests/upstream/rules.integration.test.ts",
    test: "denies a write a rule forbids, and nothing reaches the server",
  },
  {
    name: "upstream rules hold",
    file: "lib/upstream/pipeline.ts",
    find: '  if (call.tool.verdict === "allow" && !ruleHolds(call.rules))',
    replace: '  if (call.tool.verdict === "allow")',
    testFile: "tests/upstream/rules.integration.test.ts",
    test: "holds a write under etc for a supervisor, with the rule's reason, and sends it once approved",
  },
  {
    name: "upstream rules at approval",
    file: "lib/upstream/calls/approve.ts",
    find: '  if (stopped) return { ok: false, reason: "stopped", message, outcome: stopped };',
    replace: "",
    testFile: "tests/upstream/rules.integration.test.ts",
    test: "re-checks the rules at approval: a deny rule published while the write waited refuses it, nothing sent",
  },
  {
    name: "upstream provider names",
    file: "lib/upstream/calls/exposure.ts",
    find: 'offered: format === "toolgate" ? name : providerName(name)',
    replace: "offered: name",
    testFile: "tests/upstream/provider-names.integration.test.ts",
    test: "is listed under a name OpenAI, Anthropic and MCP hosts take, and under its own in toolgate's format",
  },
  {
    name: "upstream provider name taken",
    file: "lib/upstream/calls/exposure.ts",
    find: "  return tools.filter((tool) => !taken(tool)).map(",
    replace: "  return tools.filter((tool) => taken === taken).map(",
    testFile: "tests/upstream/provider-names.integration.test.ts",
    test: "is not listed when another tool of its server is named as it would be offered, and that tool runs",
  },
];
