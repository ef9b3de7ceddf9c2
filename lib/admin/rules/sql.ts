import type { Db, Tx } from "../../db";

/** The tenant's rule sets in force, the tenant row locked until the transaction ends (publishing is one at a time). */
export async function lockRuleSets(
  tx: Tx,
  tenantId: string,
): Promise<{ liveRuleSetId: string | null; shadowRuleSetId: string | null; liveText: string | null }> {
  const [row] = await tx.$queryRaw<
    { liveRuleSetId: string | null; shadowRuleSetId: string | null; liveText: string | null }[]
  >`
    SELECT t."liveRuleSetId", t."shadowRuleSetId", r."text" AS "liveText"
    FROM "Tenant" t LEFT JOIN "PolicyRuleSet" r ON r."id" = t."liveRuleSetId"
    WHERE t."id" = ${tenantId} FOR UPDATE OF t`;
  return row;
}

/** Stores a rule set as the tenant's next version and puts it in force as `status`; returns its version. */
export async function insertRuleSet(
  tx: Tx,
  set: { id: string; tenantId: string; status: "live" | "shadow"; text: string; createdById: string },
): Promise<number> {
  const [row] = await tx.$queryRaw<{ version: number }[]>`
    INSERT INTO "PolicyRuleSet" ("id", "tenantId", "version", "status", "text", "createdById")
    SELECT ${set.id}, ${set.tenantId}, COALESCE(MAX("version"), 0) + 1, ${set.status}, ${set.text}, ${set.createdById}
    FROM "PolicyRuleSet" WHERE "tenantId" = ${set.tenantId}
    RETURNING "version"`;
  await (set.status === "live"
    ? tx.$executeRaw`UPDATE "Tenant" SET "liveRuleSetId" = ${set.id} WHERE "id" = ${set.tenantId}`
    : tx.$executeRaw`UPDATE "Tenant" SET "shadowRuleSetId" = ${set.id} WHERE "id" = ${set.tenantId}`);
  return row.version;
}

/** Stops evaluating the tenant's shadow rule set; false when it had none. */
export async function clearShadowRuleSet(tx: Tx, tenantId: string): Promise<boolean> {
  const count = await tx.$executeRaw`
    UPDATE "Tenant" SET "shadowRuleSetId" = NULL WHERE "id" = ${tenantId} AND "shadowRuleSetId" IS NOT NULL`;
  return count > 0;
}

export interface RuleSetVersion {
  id: string;
  version: number;
  status: string;
  text: string;
  createdAt: Date;
  author: string;
}

/** The tenant's rule set versions, newest first, with who published each. */
export async function findRuleSetVersions(db: Db, tenantId: string, limit: number): Promise<RuleSetVersion[]> {
  return db.$queryRaw<RuleSetVersion[]>`
    SELECT r."id", r."version", r."status", r."text", r."createdAt", COALESCE(u."email", r."createdById") AS "author"
    FROM "PolicyRuleSet" r LEFT JOIN "User" u ON u."id" = r."createdById"
    WHERE r."tenantId" = ${tenantId}
    ORDER BY r."version" DESC LIMIT ${limit}`;
}

/** Decision-log rows since `since` that kept the facts their rules read, newest first, at most `limit`. */
export async function findRuleDecisions(
  db: Db,
  tenantId: string,
  since: Date,
  limit: number,
): Promise<{ callId: string; at: Date; rules: Record<string, unknown> }[]> {
  return db.$queryRaw`
    SELECT "toolCallId" AS "callId", "createdAt" AS "at", "detail"->'rules' AS "rules"
    FROM "DecisionLog"
    WHERE "tenantId" = ${tenantId} AND "createdAt" >= ${since} AND "detail" ? 'rules' AND "toolCallId" IS NOT NULL
    ORDER BY "id" DESC LIMIT ${limit}`;
}

/** The tenant's rule sets in force. */
export async function findTenantRuleSets(
  db: Db,
  tenantId: string,
): Promise<{ liveRuleSetId: string | null; shadowRuleSetId: string | null }> {
  const [row] = await db.$queryRaw<{ liveRuleSetId: string | null; shadowRuleSetId: string | null }[]>`
    SELECT "liveRuleSetId", "shadowRuleSetId" FROM "Tenant" WHERE "id" = ${tenantId}`;
  return row;
}
