// The statements both the decision and the desk read: the tenant's desk policy. Each sub-feature's own statements
// live in its sql.ts (decision/, desk/, email-links/, expiry/, notify/). Raw statements take a `Db` (a `Tx` when they
// lock rows); the reads that stay Prisma model queries take the `Client`.
import type { Db } from "../db";

/** The tenant's thresholds the desk applies when a supervisor approves. */
export interface DeskPolicy {
  stepUpAboveCents: number;
  twoPersonAboveCents: number;
}

/** The tenant's thresholds for step-up and for two approvers; null when there is no such tenant. */
export async function findDeskPolicy(db: Db, tenantId: string): Promise<DeskPolicy | null> {
  const [desk] = await db.$queryRaw<DeskPolicy[]>`
    SELECT "stepUpAboveCents", "twoPersonAboveCents" FROM "Tenant" WHERE "id" = ${tenantId}`;
  return desk ?? null;
}
