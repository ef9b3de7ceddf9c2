import type { Tx } from "../../db";
import { approveRequest } from "../decision/approve";
import { denyRequest } from "../decision/deny";
import type { ApprovalEdit } from "../decision/binding";
import type { Approver, DecisionResult } from "../decision/types";
import { findLink, PROBLEM_TEXT, problemOf, type LinkProblem } from "./open";
import { claimLink, releaseLink } from "./sql";

export type LinkDecision = DecisionResult | { ok: false; approvalId: null; code: LinkProblem; message: string };

/**
 * A decision posted from the link's page: the link is claimed first in the decision's transaction, by one
 * conditional statement, so two posts of the same link decide at most once; then the ordinary decision runs
 * (locks, binding, re-check, and a lowered amount narrowed as on the desk). A decision that leaves the request
 * pending (a retry, a missing reason or step-up, a host failure, the process ending midway) leaves the link unused.
 */
export async function decideFromLink(
  approver: Approver,
  token: string,
  decision: "approve" | "deny",
  note: string | null,
  options: { proofId?: string | null; edit?: ApprovalEdit } = {},
): Promise<LinkDecision> {
  const link = await findLink(approver.tenantId, token);
  const refuse = (code: LinkProblem): LinkDecision => ({
    ok: false,
    approvalId: null,
    code,
    message: PROBLEM_TEXT[code],
  });
  if (!link) return refuse("link.not-found");
  if (link.recipientId !== approver.userId) return refuse("link.other-recipient");
  // Used or expired is decided by the claim's statement alone, never by the read above, which a racing post may
  // have outdated.
  const claim = {
    take: (tx: Tx) => claimLink(tx, link.linkId),
    giveBack: (tx: Tx) => releaseLink(tx, link.linkId, link.approvalId),
  };
  const result =
    decision === "approve"
      ? await approveRequest(approver, link.approvalId, { ...options, claim })
      : await denyRequest(approver, link.approvalId, note, claim);
  if (!result.ok && result.code === "approval.claim-taken")
    return refuse(problemOf(link, approver.userId) === "link.expired" ? "link.expired" : "link.used");
  return result;
}
