import type { Defect } from "./defect";

/** The seeded defects of lib/approvals/. */
export const defects: Defect[] = [
  {
    name: "approval link single use",
    file: "lib/approvals/email-links/sql.ts",
    find: 'WHERE "id" = ${linkId} AND "usedAt" IS NULL AND',
    replace: 'WHERE "id" = ${linkId} AND',
    testFile: "tests/approvals/approval-links.integration.test.ts",
    test: "a mail scanner opening the link twice decides nothing; the supervisor's one post executes once; a second post is refused",
  },
  {
    name: "approval link recipient",
    file: "lib/approvals/email-links/open.ts",
    find: 'if (link.recipientId !== userId) return "link.other-recipient";',
    replace: "",
    testFile: "tests/approvals/approval-links.integration.test.ts",
    test: "refuses an expired link, another person's link, another tenant's and a made-up token, and changes nothing",
  },
  {
    name: "step-up",
    file: "lib/approvals/decision/approve.ts",
    find: "if (needsStepUp && !stepUp) {",
    replace: "if (false) {",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "above the threshold an approval consumes a proof made in this session for this request at this amount; the decision records how",
  },
  {
    name: "step-up kept by a stopped approval",
    file: "lib/approvals/decision/approve.ts",
    find: "if (!result.ok && proof.stepUp)",
    replace: "if (false)",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "an approval stopped by its re-check uses none of its batch's proof, and the same proof approves the request again",
  },
  {
    name: "narrowing only",
    file: "lib/approvals/decision/binding.ts",
    find: "after > before",
    replace: "false",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "refuses a raise, another order, another tool, another currency or reason, executing nothing and leaving the request pending",
  },
  {
    name: "two different approvers",
    file: "lib/approvals/decision/approve.ts",
    find: "if (twoPerson && request.firstApproverId === approver.userId) {",
    replace: "if (false) {",
    testFile: "tests/approvals/approval-desk.integration.test.ts",
    test: "records the first approval as partial, refuses the same person and the requester, and executes on a second supervisor",
  },
  {
    name: "duplicate re-checked at approval",
    file: "lib/approvals/decision/approve.ts",
    find: "if (duplicate && request.shownDuplicates.length === 0) {",
    replace: "if (false) {",
    testFile: "tests/gateway/duplicate-intent.integration.test.ts",
    test: "at approval, a duplicate issued after the request was made stops the click once and joins the card; the next approval pays it",
  },
];
