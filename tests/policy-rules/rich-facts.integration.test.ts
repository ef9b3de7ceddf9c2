import { describe, expect, it } from "vitest";
import { publishRules } from "@/lib/admin/rules/publishing/publish";
import { replayRules } from "@/lib/admin/rules/replay";
import { setRulesTimeZone } from "@/lib/admin/rules/time-zone";
import { db } from "@/lib/db";
import { RULE_TEMPLATES } from "@/lib/policy-rules/cases/templates";
import { approveAs } from "../support/admin-changes";
import { conversationFor, newCallKey, propose } from "../support/api";
import { expectNoEffect } from "../support/effects";
import { noProof, provedFor } from "../support/step-up";
import { addPerson, createWorld, moreOrders, type World } from "../support/world";
import { ageWorld, refund } from "./support";

// Issue 38's richer facts through the route: read in the call's one facts statement, kept in the decision's
// snapshot, and enough for "hold refunds of a customer refunded twice this week", written from a template.

const template = (id: string) => RULE_TEMPLATES.find((candidate) => candidate.id === id)!;

const anaConversation = (world: World) => conversationFor(world.keys.agent, { customer_id: world.customers.ana });

async function refundOf(world: World, order: string, amount = 1000, conversation?: string) {
  return propose(world.keys.agent, conversation ?? (await anaConversation(world)), refund(order, amount), newCallKey());
}

const recordedFacts = async (callId: string) =>
  ((await db.decisionLog.findFirstOrThrow({ where: { toolCallId: callId }, orderBy: { id: "asc" } })).detail as any)
    .rules.facts;

describe("richer rule facts", () => {
  it("a rule from the template 'a customer refunded often' holds the customer's third refund of the week", async () => {
    const world = await createWorld();
    await ageWorld(world);
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const often = template("customer-refunded-often");
    expect(
      await publishRules(admin, { text: often.text, status: "live", cases: often.cases }, await noProof(admin.id)),
    ).toMatchObject({ ok: true, published: { version: 1 } });
    const [a, b, c] = await moreOrders(world, 3);
    expect((await refundOf(world, a)).json.code).toBe("refund.issued");
    expect((await refundOf(world, b)).json.code).toBe("refund.issued");
    const conversation = await anaConversation(world);
    const held = await expectNoEffect(world, () => refundOf(world, c, 1000, conversation));
    expect(held.json).toMatchObject({
      code: "approval.required",
      model: { status: "needs_approval", reason: "This customer was refunded twice or more in the last 7 days" },
    });
    expect(await recordedFacts(held.json.id)).toMatchObject({
      customer: { refunds_7d: 2, refunded_cents_7d: 2000 },
      agent: { role: "AGENT", refunds_today: 2 },
      args: { order_id: c, amount_cents: 1000, reason: "damaged" },
    });
    // Free-text arguments are personal data the decision log never keeps; replay reads them as empty.
    expect((await recordedFacts(held.json.id)).args).not.toHaveProperty("currency");
  });

  it("the snapshot keeps the agent's role, age and exposure, the tool's arguments and the time in the tenant's zone", async () => {
    const world = await createWorld();
    await ageWorld(world);
    await db.user.update({
      where: { id: world.users.agent },
      data: { createdAt: new Date(Date.now() - 3 * 86_400_000) },
    });
    await db.tenant.update({ where: { id: world.tenantId }, data: { timeZone: "Asia/Kolkata" } });
    const [first, second] = await moreOrders(world, 2);
    expect((await refundOf(world, first, 1500)).json.code).toBe("refund.issued");
    const response = await refundOf(world, second, 2500);
    const facts = await recordedFacts(response.json.id);
    const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Kolkata", hour: "numeric", hourCycle: "h23" });
    expect(facts).toMatchObject({
      agent: { role: "AGENT", age_days: 3, exposure_cents: 1500 },
      args: { amount_cents: 2500, reason: "damaged" },
      call: { hour: Number(local.format(new Date())) },
    });
    expect(facts.call.weekday).toBeGreaterThanOrEqual(1);
    expect(facts.call.weekday).toBeLessThanOrEqual(7);

    // The new agent's refunds, replayed under the template: both would have waited.
    const replayed = await replayRules(world.tenantId, template("new-agent-refunds").text, 7);
    expect(replayed).toMatchObject({
      ok: true,
      report: { decisions: 2, byRule: [{ rule: "new-agent-refunds", calls: 2 }] },
    });
  });

  it("a decision recorded before the richer facts replays, reading them as empty, and is counted", async () => {
    const world = await createWorld();
    await ageWorld(world);
    const [order] = await moreOrders(world, 1);
    const response = await refundOf(world, order);
    // As a decision of before issue 38 kept it: without the facts added then (the log is append-only, so the
    // rewrite runs with its triggers off, as only a test may).
    await db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL session_replication_role = replica");
      await tx.$executeRaw`
      UPDATE "DecisionLog" SET "detail" = jsonb_set("detail", '{rules,facts}',
        ("detail"->'rules'->'facts') - 'args' #- '{agent,role}' #- '{agent,age_days}' #- '{agent,exposure_cents}'
          #- '{customer,refunds_7d}' #- '{customer,refunded_cents_7d}' #- '{call,hour}' #- '{call,weekday}')
      WHERE "toolCallId" = ${response.json.id}`;
    });
    expect((await recordedFacts(response.json.id)).args).toBeUndefined();
    // A missing age reads 0, so "new this week" holds it; a missing argument reads empty, so this one does not.
    expect(await replayRules(world.tenantId, template("new-agent-refunds").text, 7)).toMatchObject({
      ok: true,
      report: { decisions: 1, olderFacts: 1, byRule: [{ rule: "new-agent-refunds", calls: 1 }] },
    });
    expect(await replayRules(world.tenantId, template("large-refund-out-of-hours").text, 7)).toMatchObject({
      ok: true,
      report: { decisions: 1, olderFacts: 1, differences: [] },
    });
  });

  it("the tenant's time zone: an unknown name is refused; while live rules read the time a change needs step-up and waits for a second admin", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const zone = async () => (await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).timeZone;
    expect(await setRulesTimeZone(admin, "Mars/Olympus", await noProof(admin.id))).toMatchObject({
      ok: false,
      code: "time-zone.unknown",
    });
    expect(await setRulesTimeZone(admin, "Europe/Paris", await noProof(admin.id))).toEqual({
      ok: true,
      set: "Europe/Paris",
    });
    expect(await zone()).toBe("Europe/Paris");

    const hours = template("large-refund-out-of-hours");
    await publishRules(admin, { text: hours.text, status: "live", cases: hours.cases }, await noProof(admin.id));
    const bea = `${world.users.admin}_bea`;
    await addPerson(world, bea, "ADMIN", "Bea");
    // A stolen session alone proposes nothing; a proof made for another zone does not count for this one.
    for (const holder of [
      await noProof(admin.id),
      await provedFor(admin.id, { kind: "admin.time-zone", timeZone: "Asia/Tokyo" }),
    ]) {
      expect(await setRulesTimeZone(admin, "Pacific/Kiritimati", holder)).toMatchObject({
        ok: false,
        code: "step-up.required",
      });
    }
    expect(await db.adminChange.count({ where: { tenantId: world.tenantId } })).toBe(0);
    const proof = await provedFor(admin.id, { kind: "admin.time-zone", timeZone: "Pacific/Kiritimati" });
    expect(await setRulesTimeZone(admin, "Pacific/Kiritimati", proof)).toMatchObject({
      ok: true,
      held: { mode: "second-admin" },
    });
    const [proposed] = await db.auditLog.findMany({ where: { tenantId: world.tenantId, action: "change.proposed" } });
    expect(proposed.detail).toMatchObject({ kind: "time-zone", stepUp: "password" });
    expect(await zone()).toBe("Europe/Paris");
    const change = await db.adminChange.findFirstOrThrow({ where: { tenantId: world.tenantId, kind: "time-zone" } });
    expect(await approveAs({ id: bea, tenantId: world.tenantId }, change)).toEqual({ ok: true });
    expect(await zone()).toBe("Pacific/Kiritimati");
    const audit = await db.auditLog.findMany({ where: { tenantId: world.tenantId, action: "rules.time-zone-set" } });
    expect(audit.map((entry) => entry.detail)).toEqual([
      { before: "UTC", after: "Europe/Paris" },
      { before: "Europe/Paris", after: "Pacific/Kiritimati", changeId: change.id, approvedById: bea },
    ]);
  });

  it("rules that spell an attribute another way (brackets, an escape, a comment) read it all the same", async () => {
    const world = await createWorld();
    await ageWorld(world);
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const text = `@id("large-out-of-hours") @hold("A large refund out of office hours")
forbid (principal, action == Action::"issue_refund", resource)
when { context["amount\\u{5f}cents"] >= 1000 && (context["hour"] >= 0 || context // the day of the week
  .weekday >= 1) };`;
    expect(await publishRules(admin, { text, status: "live" }, await noProof(admin.id))).toMatchObject({ ok: true });
    // The rule is enforced, not failed for a fact left out of the request.
    const [order] = await moreOrders(world, 1);
    expect((await refundOf(world, order, 2000)).json).toMatchObject({
      code: "approval.required",
      model: { rules: ["large-out-of-hours"] },
    });
    // And it reads the time, so moving the time zone waits for a second admin.
    await addPerson(world, `${world.users.admin}_bea`, "ADMIN", "Bea");
    const proof = await provedFor(admin.id, { kind: "admin.time-zone", timeZone: "Pacific/Kiritimati" });
    expect(await setRulesTimeZone(admin, "Pacific/Kiritimati", proof)).toMatchObject({
      ok: true,
      held: { mode: "second-admin" },
    });
    expect((await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).timeZone).toBe("UTC");
  });

  it("the agent's exposure is read without the call's own reservation, also when judged again under its locks", async () => {
    const world = await createWorld();
    await ageWorld(world);
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const text = `@id("exposed-agent") @hold("The agent moved 30.00 or more on its own today")
forbid (principal, action == Action::"issue_refund", resource) when { principal.exposure_cents >= 3000 };`;
    await publishRules(admin, { text, status: "live" }, await noProof(admin.id));
    const [a, b, c] = await moreOrders(world, 3);
    expect((await refundOf(world, a, 2000)).json.code).toBe("refund.issued");
    // 2000 before it: allowed, and judged again after reserving its 1000 on the same 2000.
    const second = await refundOf(world, b, 1000);
    expect(second.json.code).toBe("refund.issued");
    expect((await recordedFacts(second.json.id)).agent.exposure_cents).toBe(2000);
    const third = await refundOf(world, c, 500);
    expect(third.json).toMatchObject({ code: "approval.required", model: { rules: ["exposed-agent"] } });
    expect((await recordedFacts(third.json.id)).agent.exposure_cents).toBe(3000);
  });
});
