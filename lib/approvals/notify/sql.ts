// The statements of the notice a new request sends.
import type { Db } from "../../db";

/**
 * Whom a new request is announced to: the tenant's webhook, the customer's email (when the customer is the
 * tenant's) and its active supervisors by email; null when there is no such tenant.
 */
export async function findRequestAudience(db: Db, tenantId: string, customerId: string) {
  const [tenant] = await db.$queryRaw<
    { webhookUrl: string | null; customerEmail: string | null; supervisors: { id: string; email: string }[] }[]
  >`
    SELECT t."webhookUrl",
           (SELECT cu."email" FROM "Customer" cu WHERE cu."id" = ${customerId} AND cu."tenantId" = t."id") AS "customerEmail",
           COALESCE((SELECT json_agg(json_build_object('id', u."id", 'email', u."email") ORDER BY u."email") FROM "User" u
                     WHERE u."tenantId" = t."id" AND u."role" = 'SUPERVISOR' AND u."active"), '[]'::json) AS "supervisors"
    FROM "Tenant" t WHERE t."id" = ${tenantId}`;
  return tenant ?? null;
}
