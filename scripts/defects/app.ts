import type { Defect } from "./defect";

/** The seeded defects of the routes and pages (app/). */
export const defects: Defect[] = [
  {
    name: "ready detail for operators only",
    file: "app/api/ready/route.ts",
    find: "const body = !fromOperator(request) ? { status } : ready",
    replace: "const body = ready",
    testFile: "tests/ops/health.integration.test.ts",
    test: "tells anyone without the metrics token only whether it is ready, and logs what is not once, until it changes",
  },
  {
    name: "open body bound",
    file: "app/api/v1/conversations/route.ts",
    find: "if (raw.truncated)",
    replace: "if (false)",
    testFile: "tests/conversations/conversation-open.integration.test.ts",
    test: "refuses a REST open body past its limit with 413 request.too-large and Connection: close, opening nothing",
  },
  {
    name: "oauth consent origin",
    file: "app/api/oauth/authorize/route.ts",
    find: "if (!fromOwnPage(request, issuerOf(request)))",
    replace: "if (!fromOwnPage(request, issuerOf(request)) && false)",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a form posted from another site is refused before anything is read",
  },
  {
    name: "a pasted key names its conversation",
    file: "app/api/mcp/route.ts",
    find: "if (!found && (named !== null || !agent.connection))",
    replace: "if (!found && named !== null)",
    testFile: "tests/conversations/working-on.integration.test.ts",
    test: "the old URL form keeps working for a connection, and a pasted key still names its conversation",
  },
];
