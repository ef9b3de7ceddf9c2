import { sha256Hex } from "../../canonical";
import { db } from "../../db";
import { findLinkByHash, findLinkedRequest, type LinkedRequest, type LinkRow } from "./sql";

const TokenSchemaPattern = /^[A-Za-z0-9_-]{43}$/;

export type LinkProblem = "link.not-found" | "link.other-recipient" | "link.used" | "link.expired";

export const PROBLEM_TEXT: Record<LinkProblem, string> = {
  "link.not-found": "This approval link is not valid. Open the request from Approvals instead.",
  "link.other-recipient": "This link was sent to another supervisor. Open the request from Approvals instead.",
  "link.used": "This link has already been used to decide. Open the request from Approvals to see what happened.",
  "link.expired": "This link expired with its request. Nothing can be decided from it.",
};

export type LinkView =
  | { ok: true; request: LinkedRequest; usable: boolean; problem: LinkProblem | null; message: string | null }
  | { ok: false; code: LinkProblem; message: string };

export async function findLink(tenantId: string, token: string): Promise<LinkRow | null> {
  if (!TokenSchemaPattern.test(token)) return null;
  return findLinkByHash(db, tenantId, sha256Hex(token));
}

export function problemOf(link: Omit<LinkRow, "approvalId">, userId: string, now = new Date()): LinkProblem | null {
  if (link.recipientId !== userId) return "link.other-recipient";
  if (link.usedAt) return "link.used";
  if (link.linkExpiresAt <= now) return "link.expired";
  return null;
}

/**
 * What the link's page shows. Only reads: opening the link (a person, a mail scanner, a preview fetcher) never
 * decides anything and never uses the link up. A token of another tenant reads as not found.
 */
export async function openApprovalLink(user: { id: string; tenantId: string }, token: string): Promise<LinkView> {
  const link = await findLink(user.tenantId, token);
  if (!link) return { ok: false, code: "link.not-found", message: PROBLEM_TEXT["link.not-found"] };
  const problem = problemOf(link, user.id);
  if (problem === "link.other-recipient") return { ok: false, code: problem, message: PROBLEM_TEXT[problem] };
  const request = await findLinkedRequest(db, user.tenantId, link.approvalId);
  if (!request) return { ok: false, code: "link.not-found", message: PROBLEM_TEXT["link.not-found"] };
  const usable = problem === null && request.status === "pending" && request.expiresAt > new Date();
  return { ok: true, request, usable, problem, message: problem ? PROBLEM_TEXT[problem] : null };
}
