import type { Defect } from "./defect";

/** The seeded defects of lib/tools/. */
export const defects: Defect[] = [
  {
    name: "order by its key",
    file: "lib/tools/sql.ts",
    find: 'WHERE "id" = ${orderId} OFFSET 0) o`;',
    replace: 'WHERE "id" = ${orderId}) o`;',
    testFile: "tests/gateway/order-lookup.integration.test.ts",
    test: "is read by its key however many orders its customer has",
  },
  {
    name: "order version",
    file: "lib/tools/sql.ts",
    find: 'WHERE "id" = ${order.id} AND "version" = ${order.version} ${onlyIf}\n',
    replace: 'WHERE "id" = ${order.id} ${onlyIf}\n',
    testFile: "tests/stress/concurrency.integration.test.ts",
    test: "a write conditional on a version the order has moved past gives order.changed and changes nothing",
  },
  {
    name: "refund reservation",
    file: "lib/tools/issue-refund.ts",
    find: "orderChanges: (args) => ({ refundedCentsIncrement: args.amount_cents, refundPending: true }),",
    replace: "orderChanges: (args) => ({ refundedCentsIncrement: args.amount_cents }),",
    testFile: "tests/payments/provider-faults.integration.test.ts",
    test: "timeout after acting: unknown (never executed, never failed), then reconcile finds it issued, one provider refund",
  },
  {
    name: "call status beyond the caller's tools",
    file: "lib/tools/sql.ts",
    find: ' AND c."toolName" = ANY(${callable}::text[])',
    replace: "",
    testFile: "tests/oauth/oauth-connection-reach.integration.test.ts",
    test: "reads back with get_call_status none of the refund calls the agent's key made, as with their tasks",
  },
  {
    name: "nearest tool beyond the conversation's",
    file: "lib/tools/registry.ts",
    find: "  return [...callableTools(conversation).filter((name) => findTool(name)), ...CALLS_TOOLS.map((tool) => tool.name)];",
    replace: "  return [...TOOL_NAMES, ...CALLS_TOOLS.map((tool) => tool.name)];",
    testFile: "tests/gateway/refusals.integration.test.ts",
    test: "tool.unknown: a misspelling of a tool the conversation cannot call is answered as any unknown name is",
  },
];
