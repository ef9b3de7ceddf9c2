// The statements of the notice a new request sends.
import type { Db } from "../../db";
import type { ApprovalPreview } from "../../gateway";

/** Whom a new request is announced to. */
export interface RequestAudience {
  webhookUrl: string | null;
  customerEmail: string | null;
  supervisors: { id: string; email: string }[];
}

/**
 * Whom a new request is announced to: the tenant's webhook, the customer's email (when the customer is the
 * tenant's) and its active supervisors by email; null when there is no such tenant.
 */
export async function findRequestAudience(db: Db, tenantId: string, customerId: string) {
  const [tenant] = await db.$queryRaw<RequestAudience[]>`
    SELECT t."webhookUrl",
           (SELECT cu."email" FROM "Customer" cu WHERE cu."id" = ${customerId} AND cu."tenantId" = t."id") AS "customerEmail",
           COALESCE((SELECT json_agg(json_build_object('id', u."id", 'email', u."email") ORDER BY u."email") FROM "User" u
                     WHERE u."tenantId" = t."id" AND u."role" = 'SUPERVISOR' AND u."active"), '[]'::json) AS "supervisors"
    FROM "Tenant" t WHERE t."id" = ${tenantId}`;
  return tenant ?? null;
}

/**
 * What a chat notice says about a request: its preview, the requesting agent's name, the customer's email (when the
 * customer is the tenant's) and the name of the person who decided (when `deciderId` is the tenant's); null when
 * there is no such request.
 */
export async function findNoticeFacts(db: Db, approvalId: string, deciderId: string | null) {
  const [row] = await db.$queryRaw<
    {
      tenantId: string;
      orderId: string;
      toolName: string;
      impactCents: number;
      preview: ApprovalPreview;
      expiresAt: Date;
      agent: string | null;
      customerEmail: string | null;
      decider: string | null;
    }[]
  >`
    SELECT r."tenantId", r."orderId", r."toolName", r."impactCents", r."preview", r."expiresAt",
           a."name" AS "agent", cu."email" AS "customerEmail",
           (SELECT d."name" FROM "User" d WHERE d."id" = ${deciderId}::text AND d."tenantId" = r."tenantId") AS "decider"
    FROM "ApprovalRequest" r
    LEFT JOIN "User" a ON a."id" = r."requestedById" AND a."tenantId" = r."tenantId"
    LEFT JOIN "Customer" cu ON cu."id" = r."preview"->>'customer_id' AND cu."tenantId" = r."tenantId"
    WHERE r."id" = ${approvalId}`;
  return row ?? null;
}
