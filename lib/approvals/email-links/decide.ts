import { db } from "../../db";
import { approveRequest } from "../decision/approve";
import { denyRequest } from "../decision/deny";
import type { ApprovalEdit } from "../decision/binding";
import type { Approver, DecisionResult } from "../decision/types";
import { findLink, PROBLEM_TEXT, problemOf, type LinkProblem } from "./open";
import { claimLink, releaseLink } from "./sql";

export type LinkDecision = DecisionResult | { ok: false; approvalId: null; code: LinkProblem; message: string };

/**
 * A decision posted from the link's page: the link is claimed first, in one conditional statement, so two
 * posts of the same link decide at most once; then the ordinary decision runs (locks, binding, re-check, and a
 * lowered amount narrowed as on the desk).
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
  // Used or expired is decided by this one statement alone, never by the read above, which a racing post may have outdated.
  if (!(await claimLink(db, link.linkId)))
    return refuse(problemOf(link, approver.userId) === "link.expired" ? "link.expired" : "link.used");
  const result =
    decision === "approve"
      ? await approveRequest(approver, link.approvalId, options)
      : await denyRequest(approver, link.approvalId, note);
  // A decision that left the request pending (a retry, a host failure, a missing reason or step-up) gives the link
  // back for another try.
  if (!result.ok) await releaseLink(db, link.linkId, link.approvalId);
  return result;
}
