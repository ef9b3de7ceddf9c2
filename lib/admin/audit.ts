import { db } from "../db";
import { findRecentAudit, type AuditEntry } from "./sql";

export type { AuditEntry } from "./sql";

/** The tenant's latest admin changes, newest first, with who made each. */
export async function recentAudit(tenantId: string): Promise<AuditEntry[]> {
  return findRecentAudit(db, tenantId);
}
