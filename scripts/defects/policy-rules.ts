import type { Defect } from "./defect";

/** The seeded defects of lib/policy-rules/. */
export const defects: Defect[] = [
  {
    name: "rule engine errors fail closed",
    file: "lib/policy-rules/engine/evaluate.ts",
    find: "if (diagnostics.errors.length > 0) {",
    replace: "if (diagnostics.errors.length < 0) {",
    testFile: "tests/policy-rules/rules-route.integration.test.ts",
    test: "a rule set that fails at call time fails closed: the call is not allowed, and an approval is not executed",
  },
  {
    name: "rule screen errors fail closed",
    file: "lib/policy-rules/engine/evaluate.ts",
    find: "screened.response.diagnostics.errors.length === 0",
    replace: "screened.response.diagnostics.errors.length >= 0",
    testFile: "tests/policy-rules/screen.test.ts",
    test: "gives the verdict the rules alone give, on 3,000 random calls over rules of every shape",
  },
  {
    name: "rule screen scopes",
    file: "lib/policy-rules/engine/screen.ts",
    find: '({ Value: "__entity" in uid ? uid : { __entity: uid } })',
    replace: "({ Value: uid })",
    testFile: "tests/policy-rules/screen.test.ts",
    test: "gives the verdict the rules alone give, on 3,000 random calls over rules of every shape",
  },
  {
    name: "rules only forbid",
    file: "lib/policy-rules/validate.ts",
    find: 'if (effect !== "forbid") {',
    replace: "if (!effect) {",
    testFile: "tests/policy-rules/engine.test.ts",
    test: "refuses a permit, a rule without @id, and one with both or neither of @hold and @deny",
  },
  {
    name: "rule nesting bound",
    file: "lib/policy-rules/engine/limits.ts",
    find: "if (depth > RULE_LIMITS.depth) {",
    replace: "if (depth > 100_000) {",
    testFile: "tests/policy-rules/engine.test.ts",
    test: "refuses oversized and deeply nested sets before the parser sees them (the wasm parser would overflow)",
  },
  {
    name: "rule operator chain bound",
    file: "lib/policy-rules/engine/limits.ts",
    find: "const overLimit = countsOverLimit(stretch);",
    replace: "const overLimit = null;",
    testFile: "tests/policy-rules/engine.test.ts",
    test: "refuses a set chaining thousands of operators before the engine parses the whole set (its stack overflowed)",
  },
  {
    name: "rule reserved ids",
    file: "lib/policy-rules/validate.ts",
    find: "if (id.startsWith(RESERVED_ID_PREFIX)) {",
    replace: "if (false) {",
    testFile: "tests/policy-rules/engine.test.ts",
    test: "refuses a rule under a built-in policy's id (it replaced the base permit)",
  },
  {
    name: "replay compares the candidate",
    file: "lib/policy-rules/replay/replay.ts",
    find: "const would = decidedBy(decision.consequence, candidate);",
    replace: "const would = decidedBy(decision.consequence, decision.live);",
    testFile: "tests/policy-rules/shadow-replay.integration.test.ts",
    test: "a shadow set is recorded beside the live one, never enforced; replay over the same calls reports the same",
  },
];
