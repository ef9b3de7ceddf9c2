import { describe, expect, it } from "vitest";
import { authenticateApiKey } from "@/lib/auth/keys/api-keys";
import { createAgentKey, revokeAgentKey } from "@/lib/admin/access/agent-keys";
import { PolicySchema, updatePolicy } from "@/lib/admin/policy/numbers";
import { db } from "@/lib/db";
import { createWorld } from "../support/world";
import { policyProof, provedFor } from "../support/step-up";

describe("admin: policy and keys", () => {
  it("validates policy numbers and audits every change with before and after", async () => {
    const world = await createWorld();
    expect(
      PolicySchema.safeParse({ autoLimitCents: -1, sessionCapCents: 1, maxAutoWrites: 1, approvalTtlSeconds: 60 })
        .success,
    ).toBe(false);
    expect(
      PolicySchema.safeParse({ autoLimitCents: 1.5, sessionCapCents: 1, maxAutoWrites: 1, approvalTtlSeconds: 60 })
        .success,
    ).toBe(false);
    expect(
      PolicySchema.safeParse({ autoLimitCents: 1, sessionCapCents: 1, maxAutoWrites: 1, approvalTtlSeconds: 5 })
        .success,
    ).toBe(false);
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const ceilings = {
      agentDailyCeilingCents: "20000",
      tenantDailyCeilingCents: "50000",
      rateOpenPerMin: "10",
      stepUpAboveCents: "10000",
      twoPersonAboveCents: "100000",
      expiryWarningSeconds: "0",
      secondAdminAboveCents: "10000",
      changeDelaySeconds: "86400",
      duplicateWindowHours: "24",
      oauthRefreshIdleDays: "30",
      oauthRefreshMaxDays: "90",
    };
    const small = { autoLimitCents: 1, sessionCapCents: 1, maxAutoWrites: 1, approvalTtlSeconds: 60, ...ceilings };
    expect(PolicySchema.safeParse({ ...small, tenantDailyCeilingCents: -1 }).success).toBe(false);
    expect(PolicySchema.safeParse({ ...small, rateOpenPerMin: 0 }).success).toBe(false);
    const input = PolicySchema.parse({
      autoLimitCents: "2000",
      sessionCapCents: "6000",
      maxAutoWrites: "2",
      approvalTtlSeconds: "600",
      ...ceilings,
    });
    const typed = Object.fromEntries(Object.entries(input).map(([name, value]) => [name, String(value)]));
    await updatePolicy(admin, input, await policyProof(admin.id, typed));
    expect(await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).toMatchObject({
      autoLimitCents: 2000,
      sessionCapCents: 6000,
      maxAutoWrites: 2,
      approvalTtlSeconds: 600,
      agentDailyCeilingCents: 20000,
      tenantDailyCeilingCents: 50000,
      rateOpenPerMin: 10,
    });
    const [entry] = await db.auditLog.findMany({ where: { tenantId: world.tenantId } });
    expect(entry).toMatchObject({
      actorId: world.users.admin,
      action: "policy.updated",
      detail: {
        before: { autoLimitCents: 5000, agentDailyCeilingCents: 25000, tenantDailyCeilingCents: 100000 },
        after: { autoLimitCents: 2000, agentDailyCeilingCents: 20000, tenantDailyCeilingCents: 50000 },
      },
    });
    await expect(db.auditLog.delete({ where: { id: entry.id } })).rejects.toThrow(/append-only/);
  });

  it("creates a key shown once (only its hash is stored) and revokes it, only within the tenant", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const created = await createAgentKey(
      admin,
      world.users.agent2,
      await provedFor(admin.id, { kind: "admin.key-created", userId: world.users.agent2 }),
    );
    if (!created.ok) throw new Error("should create");
    const stored = await db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored.hash).not.toContain(created.key);
    expect(JSON.stringify(stored)).not.toContain(created.key);
    expect(await authenticateApiKey(`Bearer ${created.key}`)).toMatchObject({ userId: world.users.agent2 });
    for (const userId of [world.users.otherAgent, world.users.supervisor]) {
      const holder = await provedFor(admin.id, { kind: "admin.key-created", userId });
      expect(await createAgentKey(admin, userId, holder)).toEqual({ ok: false, problem: "not-found" });
    }
    expect(await revokeAgentKey({ id: world.users.admin, tenantId: world.otherTenantId }, created.id)).toBe(false);
    expect(await revokeAgentKey(admin, created.id)).toBe(true);
    expect(await authenticateApiKey(`Bearer ${created.key}`)).toBeNull();
    expect(
      (await db.auditLog.findMany({ where: { tenantId: world.tenantId } })).map((row) => row.action).sort(),
    ).toEqual(["api-key.created", "api-key.revoked"]);
  });
});
