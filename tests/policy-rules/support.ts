import { randomBytes } from "node:crypto";
import { db } from "@/lib/db";
import type { World } from "../support/world";

const DAY_MS = 86_400_000;
export const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);

/** Stores `text` as the tenant's next version and puts it in force as `status`, as a publish leaves it. */
export async function putRules(world: World, text: string, status: "live" | "shadow" = "live"): Promise<string> {
  const id = `prs_${randomBytes(6).toString("hex")}`;
  const version = (await db.policyRuleSet.count({ where: { tenantId: world.tenantId } })) + 1;
  await db.policyRuleSet.create({
    data: { id, tenantId: world.tenantId, version, status, text, createdById: world.users.admin },
  });
  await db.tenant.update({
    where: { id: world.tenantId },
    data: status === "live" ? { liveRuleSetId: id } : { shadowRuleSetId: id },
  });
  return id;
}

/** Customers and orders of long standing, so that only the facts a test sets make a rule apply. */
export async function ageWorld(world: World): Promise<void> {
  await db.customer.updateMany({ where: { tenantId: world.tenantId }, data: { createdAt: daysAgo(400) } });
  await db.order.updateMany({ where: { tenantId: world.tenantId }, data: { placedAt: daysAgo(10) } });
}

export { refund } from "../support/calls";
