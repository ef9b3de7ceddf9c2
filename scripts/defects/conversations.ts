import type { Defect } from "./defect";

/** The seeded defects of lib/conversations/. */
export const defects: Defect[] = [
  {
    name: "the order read with the key is the conversation's customer's",
    file: "lib/conversations/sql.ts",
    find: `WHERE o."tenantId" = c."tenantId" AND o."customerId" = c."customerId") h)`,
    replace: `WHERE true) h)`,
    testFile: "tests/gateway/statements.integration.test.ts",
    test: "the order a read's body names is read with the key, and only as the conversation's customer's",
  },
  {
    name: "well-formed ids",
    file: "lib/conversations/open.ts",
    find: "  customer_id: IdSchema,",
    replace: "  customer_id: z.string().min(1).max(100),",
    testFile: "tests/agent-api/hostile-input.integration.test.ts",
    test: "answer 4xx (or a recorded refusal), log nothing and change nothing",
  },
  {
    name: "browser open rate",
    file: "lib/conversations/actions.ts",
    find: "const rate = await countConversationOpen({ userId: user.id, tenantId: user.tenantId });",
    replace: "const rate = { ok: true, retryAfterSeconds: 0 };",
    testFile: "tests/conversations/conversation-open.integration.test.ts",
    test: "holds the browser's open action to rateOpenPerMin per person, opening nothing past it",
  },
  {
    name: "oauth scope narrowing",
    file: "lib/conversations/authenticate.ts",
    find: "found.conversation.scopes = found.conversation.scopes.filter((scope) => granted.includes(scope));",
    replace: "void granted;",
    testFile: "tests/oauth/oauth.integration.test.ts",
    test: "a client known by its metadata document (CIMD, as VS Code does) connects with only the scopes the person chose",
  },
  {
    name: "a switch resumes the customer's conversation",
    file: "lib/conversations/sql.ts",
    find: "return row?.id ?? null;",
    replace: "return null;",
    testFile: "tests/conversations/working-on.integration.test.ts",
    test: "the person switches to A and the model refunds A's order; to B and it reads B's order; A's order is not found while B is chosen",
  },
  {
    name: "a switch re-reads its connection under lock",
    file: "lib/conversations/sql.ts",
    find: 'AND "revokedAt" IS NULL FOR NO KEY UPDATE',
    replace: "FOR NO KEY UPDATE",
    testFile: "tests/conversations/working-on.integration.test.ts",
    test: "a revocation that lands while a switch opens a conversation leaves no conversation, no pointer and no open counted",
  },
  {
    name: "a switch refused for a revoked connection counts an open",
    file: "lib/conversations/working-on.ts",
    find: "    if (!live) return CONNECTION_GONE;",
    replace: "    if (!live) {\n      await countConversationOpen(person, tx);\n      return CONNECTION_GONE;\n    }",
    testFile: "tests/conversations/working-on.integration.test.ts",
    test: "a revocation that lands while a switch opens a conversation leaves no conversation, no pointer and no open counted",
  },
  {
    name: "a switch is audited",
    file: "lib/conversations/working-on.ts",
    find: 'action: "connection.customer-switched",',
    replace: 'action: "connection.customer-switched-unsealed",',
    testFile: "tests/conversations/working-on.integration.test.ts",
    test: "only the connection's own person switches it, to a customer of their tenant; bad input changes nothing",
  },
];
