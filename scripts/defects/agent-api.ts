import type { Defect } from "./defect";

/** The seeded defects of lib/agent-api/. */
export const defects: Defect[] = [
  {
    name: "oauth insufficient scope",
    file: "lib/agent-api/mcp/endpoint.ts",
    find: "if (ask) return mcpInsufficientScope(issuerOf(request), ask.scopes, ask.tool);",
    replace: "",
    testFile: "tests/oauth/oauth-scopes.integration.test.ts",
    test: "a tool outside the token's scopes is 403 insufficient_scope with the scopes to ask for, and nothing is proposed",
  },
  {
    name: "mcp 2026 routing",
    file: "lib/agent-api/mcp/endpoint.ts",
    find: "const modern = !(await isLegacyRequest(request, parsed.value));",
    replace: "const modern = false;",
    testFile: "tests/agent-api/waits/mcp-2026.integration.test.ts",
    test: "answers server/discover, tools/list and tools/call to the v2 SDK client without an initialize",
  },
  {
    name: "mcp header mismatch (2025 era)",
    file: "lib/agent-api/mcp/endpoint.ts",
    find: "if (mismatch) return rpcError(400, HEADER_MISMATCH, mismatch);",
    replace: "",
    testFile: "tests/agent-api/waits/mcp-2026.integration.test.ts",
    test: "refuses an oversized body before it is parsed, and a 2025-era request whose Mcp-Method header disagrees",
  },
  {
    name: "mcp task only when declared",
    file: "lib/agent-api/mcp/modern.ts",
    find: 'if (call.outcome.kind === "pending_approval" && declaresTasks(ctx))',
    replace: 'if (call.outcome.kind === "pending_approval")',
    testFile: "tests/agent-api/waits/mcp-2026.integration.test.ts",
    test: "never returns a task to a client that did not declare the extension, and refuses it the tasks methods",
  },
  {
    name: "mcp tasks methods gated",
    file: "lib/agent-api/mcp/tasks/extension.ts",
    find: "if (!declaresTasks(ctx)) {",
    replace: "if (!declaresTasks(ctx) && false) {",
    testFile: "tests/agent-api/waits/mcp-2026.integration.test.ts",
    test: "never returns a task to a client that did not declare the extension, and refuses it the tasks methods",
  },
  {
    name: "mcp cors origin",
    file: "lib/agent-api/mcp/cors.ts",
    find: "  if (foreign) return foreign;\n  const origin",
    replace: "  const origin",
    testFile: "tests/agent-api/mcp-cors.integration.test.ts",
    test: "refuses a preflight from a foreign origin with the DNS-rebinding guard's 403 and no CORS headers",
  },
  {
    name: "held call says what to do",
    file: "lib/agent-api/http.ts",
    find: "    model: { ...modelProjection({ ...outcome, result }), ...waitingOn(id, outcome) },",
    replace: "    model: modelProjection({ ...outcome, result }),",
    testFile: "tests/policy-rules/say-why.integration.test.ts",
    test: "a held call's model answer and its page name the rule; a refused call's page names it, the model is not told",
  },
  {
    name: "task wait outlives revocation",
    file: "lib/agent-api/mcp/tasks/tasks.ts",
    find: "        if (!(await keyAuthenticates(db, bound.agent.apiKeyId)))",
    replace: "        if (!(await keyAuthenticates(db, bound.agent.apiKeyId)) && false)",
    testFile: "tests/oauth/oauth-connections.integration.test.ts",
    test: "gets no outcome from its open tasks/result, though the supervisor's approval stands",
  },
];
