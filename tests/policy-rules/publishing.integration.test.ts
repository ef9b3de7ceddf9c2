import { describe, expect, it } from "vitest";
import { UNREADABLE_RULES } from "@/lib/admin/changes/loosening/loosening";
import {
  publishRules,
  rulesItem,
  rulesOverview,
  ruleSetHistory,
  withdrawShadowRules,
} from "@/lib/admin/rules/publishing/publish";
import { db } from "@/lib/db";
import { approveAs, secondAdmin } from "../support/admin-changes";
import { conversationFor, newCallKey, propose } from "../support/api";
import { noProof, provedFor } from "../support/step-up";
import { createWorld, type World } from "../support/world";
import { EXAMPLE_RULES, FRAUD_WATCH, OLD_ORDERS } from "./examples";
import { ageWorld, putRules, refund } from "./support";

// Publishing rules through the functions the rules page's actions call (docs/decisions/019, 015).

const person = (world: World, id: string) => ({ id, tenantId: world.tenantId });

const tenantOf = (world: World) => db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });

async function fraudWatchWorld() {
  const world = await createWorld();
  await ageWorld(world);
  await db.customer.update({ where: { id: world.customers.ana }, data: { fraudWatch: true } });
  return world;
}

const refundCode = async (world: World) =>
  (
    await propose(
      world.keys.agent,
      await conversationFor(world.keys.agent, { customer_id: world.customers.ana }),
      refund(world.orders.o1004, 1000),
      newCallKey(),
    )
  ).json.code;

describe("publishing policy rules", () => {
  it("rules that only add apply at once as a new version, audited, and enforced on the next call", async () => {
    const world = await fraudWatchWorld();
    const admin = person(world, world.users.admin);
    const published = await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, await noProof(admin.id));
    expect(published).toMatchObject({ ok: true, published: { version: 1, status: "live" } });
    expect(await refundCode(world)).toBe("policy.rule-denied");
    const history = await ruleSetHistory(world.tenantId);
    expect(history.map((row) => [row.version, row.status, row.author])).toEqual([
      [1, "live", `Admin (admin-${world.tenantId.slice(2)}@acme.test)`],
    ]);
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId, action: "rules.published" } })).toBe(1);
  });

  it("a malformed, schema-invalid or oversized set is refused in words and the live rules stay in force", async () => {
    const world = await fraudWatchWorld();
    const admin = person(world, world.users.admin);
    await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, await noProof(admin.id));
    const before = await tenantOf(world);
    for (const text of [
      '@id("x") @hold("y") forbid (principal, action, resource) when { resource.age_days > };',
      '@id("x") @hold("y") forbid (principal, action, resource) when { resource.colour == "red" };',
      `@id("x") @hold("y") forbid (principal, action, resource) when { ${"(".repeat(500)}true${")".repeat(500)} };`,
      '@id("x") @hold("y") permit (principal, action, resource);',
      `@id("x") @hold("y") forbid (principal, action, resource) when { ${Array(9000).fill("1").join("+")} == 1 };`,
      '@id("toolgate-base") @deny("y") forbid (principal, action, resource) when { false };',
    ]) {
      const refused = await publishRules(admin, { text, status: "live" }, await noProof(admin.id));
      expect(refused).toMatchObject({ ok: false, code: "rules.invalid" });
      expect(refused.ok === false && refused.code === "rules.invalid" && refused.errors[0]).toMatch(/^(line|rule)/);
    }
    expect(await tenantOf(world)).toEqual(before);
    expect(await db.policyRuleSet.count({ where: { tenantId: world.tenantId } })).toBe(1);
    expect(await refundCode(world)).toBe("policy.rule-denied");
  });

  it("dropping a rule in force needs step-up, then a second admin; until then the old rules decide", async () => {
    const world = await fraudWatchWorld();
    const admin = person(world, world.users.admin);
    const bea = await secondAdmin(world);
    await publishRules(admin, { text: EXAMPLE_RULES, status: "live" }, await noProof(admin.id));
    const input = { text: OLD_ORDERS, status: "live" as const };

    const unproved = await publishRules(admin, input, await noProof(admin.id));
    expect(unproved).toEqual({
      ok: false,
      code: "step-up.required",
      loosened: ["first-refund-new-customer", "fraud-watch"],
    });
    const proof = await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(input.text) });
    const held = await publishRules(admin, input, proof);
    expect(held).toMatchObject({ ok: true, held: { mode: "second-admin" } });
    expect(await refundCode(world)).toBe("policy.rule-denied");

    const [change] = await db.adminChange.findMany({ where: { tenantId: world.tenantId, kind: "rules" } });
    expect(change.status).toBe("pending");
    expect(await approveAs(admin, change)).toMatchObject({ ok: false, code: "change.own" });
    expect(await approveAs(bea, change)).toEqual({ ok: true });
    expect(await refundCode(world)).toBe("refund.issued");
    const [latest] = await ruleSetHistory(world.tenantId);
    expect(latest).toMatchObject({ version: 2, status: "live", text: OLD_ORDERS });
  });

  it("replacing a live set that no longer validates loosens it whole: step-up, then a second admin", async () => {
    const world = await fraudWatchWorld();
    const admin = person(world, world.users.admin);
    const bea = await secondAdmin(world);
    // Published before an upgrade refused its form: in force, it fails every call closed.
    await putRules(world, '@id("allow-all") @hold("x") permit (principal, action, resource);');
    expect(await refundCode(world)).toBe("policy.rules-failed");
    const input = {
      text: '@id("never") @hold("x") forbid (principal, action, resource) when { false };',
      status: "live" as const,
    };

    expect(await publishRules(admin, input, await noProof(admin.id))).toEqual({
      ok: false,
      code: "step-up.required",
      loosened: [UNREADABLE_RULES],
    });
    const proof = await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(input.text) });
    expect(await publishRules(admin, input, proof)).toMatchObject({ ok: true, held: { mode: "second-admin" } });
    expect(await db.policyRuleSet.count({ where: { tenantId: world.tenantId } })).toBe(1);
    expect(await refundCode(world)).toBe("policy.rules-failed");

    const [change] = await db.adminChange.findMany({ where: { tenantId: world.tenantId, kind: "rules" } });
    expect(await approveAs(bea, change)).toEqual({ ok: true });
    expect(await refundCode(world)).toBe("refund.issued");
  });

  it("a shadow set applies at once, enforces nothing, and can be withdrawn", async () => {
    const world = await fraudWatchWorld();
    const admin = person(world, world.users.admin);
    expect(await publishRules(admin, { text: FRAUD_WATCH, status: "shadow" }, await noProof(admin.id))).toMatchObject({
      ok: true,
      published: { status: "shadow" },
    });
    expect(await refundCode(world)).toBe("refund.issued");
    expect(await withdrawShadowRules(admin)).toBe(true);
    expect((await tenantOf(world)).shadowRuleSetId).toBeNull();
  });
});

describe("a set in force that no longer passes the checks (a later release changed what rules may read)", () => {
  it("refuses the calls it judges as unavailable, and the rules page says so with the checks' words", async () => {
    const world = await fraudWatchWorld();
    await putRules(
      world,
      '@id("colour") @hold("red ones") forbid (principal, action, resource) when { resource.colour == "red" };',
    );
    expect(await refundCode(world)).toBe("policy.rules-failed");
    const overview = await rulesOverview(world.tenantId);
    expect(overview.live).toMatchObject({ summaries: [] });
    expect(overview.live!.problems.join("\n")).toMatch(/colour/);
    await putRules(world, FRAUD_WATCH);
    expect((await rulesOverview(world.tenantId)).live).toMatchObject({ problems: [] });
  });
});
