import type { Db } from "../db";

// The admin module's statements: the tenant's policy and webhook, its agents and their keys, its people's
// sessions, and the audit log of the admin's changes.

/** The admin making a change: who, and the tenant every statement is scoped to. */
export interface Admin {
  id: string;
  tenantId: string;
}

export async function insertAudit(db: Db, admin: Admin, action: string, detail: unknown): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "AuditLog" ("tenantId", "actorId", "action", "detail")
    VALUES (${admin.tenantId}, ${admin.id}, ${action}, ${JSON.stringify(detail)}::jsonb)`;
}

export interface AuditEntry {
  id: bigint;
  action: string;
  actor: string;
  createdAt: Date;
  detail: Record<string, unknown>;
}

/** The tenant's latest 20 audit entries, newest first, each naming who made it. */
export async function findRecentAudit(db: Db, tenantId: string): Promise<AuditEntry[]> {
  return db.$queryRaw<AuditEntry[]>`
    SELECT l."id", l."action", COALESCE(u."name" || ' (' || u."email" || ')', l."actorId") AS "actor", l."createdAt", l."detail"
    FROM "AuditLog" l LEFT JOIN "User" u ON u."id" = l."actorId"
    WHERE l."tenantId" = ${tenantId}
    ORDER BY l."id" DESC
    LIMIT 20`;
}
