import { randomBytes } from "node:crypto";
import { sha256Hex } from "../../canonical";
import type { Db } from "../../db";
import { APPROVAL_LINK_PATH } from "../../db/outbox";
import { env } from "../../env";
import { newId } from "../../ids";
import { insertLinks } from "./sql";

function approvalLinkUrl(token: string): string {
  const base = (env().NEXTAUTH_URL ?? "http://127.0.0.1:3000").replace(/\/+$/, "");
  return `${base}${APPROVAL_LINK_PATH}${token}`;
}

/**
 * One link per recipient, written in the caller's transaction (the one that opens the request): 256 random
 * bits handed out once, only their SHA-256 kept, dead when the request expires. Returns each recipient's URL.
 */
export async function createApprovalLinks(
  client: Db,
  approval: { id: string; tenantId: string; expiresAt: Date },
  recipientIds: string[],
): Promise<Map<string, string>> {
  const rows = recipientIds.map((recipientId) => ({
    id: newId("lnk"),
    recipientId,
    token: randomBytes(32).toString("base64url"),
  }));
  if (rows.length === 0) return new Map();
  const stored = rows.map(({ id, recipientId, token }) => ({ id, recipientId, tokenHash: sha256Hex(token) }));
  await insertLinks(client, approval, stored);
  return new Map(rows.map((row) => [row.recipientId, approvalLinkUrl(row.token)]));
}
