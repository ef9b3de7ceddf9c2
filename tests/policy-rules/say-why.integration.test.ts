import { describe, expect, it } from "vitest";
import { GET as metricsRoute } from "@/app/api/metrics/route";
import { publishRules, shadowOneRule } from "@/lib/admin/rules/publishing/publish";
import { callTimeline } from "@/lib/calls/timeline";
import { db } from "@/lib/db";
import { conversationFor, newCallKey, propose } from "../support/api";
import { noProof } from "../support/step-up";
import { createWorld, type World } from "../support/world";
import { FRAUD_WATCH, OLD_ORDERS } from "./examples";
import { ageWorld, daysAgo, refund } from "./support";

// Issue 38's "say why": the rule that held or refused a call is named on the call's page and, for a hold, in the
// model's answer; one rule tried in shadow beside the live set, its verdicts counted per rule in /api/metrics.

async function world(text: string) {
  const created = await createWorld();
  await ageWorld(created);
  const admin = { id: created.users.admin, tenantId: created.tenantId };
  await publishRules(admin, { text, status: "live" }, await noProof(admin.id));
  return { world: created, admin };
}

const refundNow = async (w: World, amount = 2000) =>
  propose(
    w.keys.agent,
    await conversationFor(w.keys.agent, { customer_id: w.customers.ana }),
    refund(w.orders.o1004, amount),
    newCallKey(),
  );

const timelineDetails = async (w: World, callId: string) =>
  (await callTimeline(w.tenantId, callId))!.events.map((event) => event.detail).join("\n");

async function shadowSample(tool: string, rule: string, verdict: string): Promise<number> {
  const response = await metricsRoute(
    new Request("http://toolgate.test/api/metrics", { headers: { "x-forwarded-for": "127.0.0.1" } }),
  );
  const line = (await response.text())
    .split("\n")
    .find((candidate) =>
      candidate.startsWith(`toolgate_rule_shadow_verdicts_total{tool="${tool}",rule="${rule}",verdict="${verdict}"}`),
    );
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("saying why", () => {
  it("a held call's model answer and its page name the rule; a refused call's page names it, the model is not told", async () => {
    const { world: w } = await world(`${OLD_ORDERS}\n\n${FRAUD_WATCH}`);
    await db.order.update({ where: { id: w.orders.o1004 }, data: { placedAt: daysAgo(120) } });
    const held = await refundNow(w);
    expect(held.json.model).toEqual({
      status: "needs_approval",
      reason: "Refunds on orders older than 90 days wait for a supervisor",
      rules: ["old-orders-wait"],
      call_id: held.json.id,
      expires_at: held.json.approval!.expires_at,
      message: expect.stringContaining("A supervisor must approve this call before it runs; it has not run."),
    });
    expect(await timelineDetails(w, held.json.id)).toContain(
      'Rules: held by rule "old-orders-wait": Refunds on orders older than 90 days wait for a supervisor',
    );

    await db.customer.update({ where: { id: w.customers.ana }, data: { fraudWatch: true } });
    const denied = await refundNow(w, 2100);
    expect(denied.json.model).toEqual({
      status: "not_allowed",
      message: expect.stringMatching(/^This call is not allowed/),
    });
    expect(await timelineDetails(w, denied.json.id)).toContain(
      'Rules: refused by rule "fraud-watch" (code customer-on-fraud-watch)',
    );
  });

  it("one rule tried in shadow beside the live set: enforced nowhere, its verdicts counted per rule in /api/metrics", async () => {
    const { world: w, admin } = await world(FRAUD_WATCH);
    expect(await shadowOneRule(admin, `${OLD_ORDERS}\n\n${FRAUD_WATCH}`, await noProof(admin.id))).toMatchObject({
      ok: false,
      code: "rules.invalid",
    });
    expect(await shadowOneRule(admin, OLD_ORDERS, await noProof(admin.id))).toMatchObject({
      ok: true,
      published: { version: 2, status: "shadow" },
    });
    const tenant = await db.tenant.findUniqueOrThrow({ where: { id: w.tenantId } });
    const shadow = await db.policyRuleSet.findUniqueOrThrow({ where: { id: tenant.shadowRuleSetId! } });
    expect(shadow.text).toBe(`${FRAUD_WATCH}\n\n${OLD_ORDERS}\n`);

    const before = await shadowSample("issue_refund", "old-orders-wait", "hold");
    await db.order.update({ where: { id: w.orders.o1004 }, data: { placedAt: daysAgo(120) } });
    const call = await refundNow(w);
    expect(call.json.code).toBe("refund.issued");
    expect(await shadowSample("issue_refund", "old-orders-wait", "hold")).toBe(before + 1);
    expect(await timelineDetails(w, call.json.id)).toContain(
      'Shadow rules: would be held by rule "old-orders-wait": Refunds on orders older than 90 days wait for a supervisor',
    );
  });

  it("a call checked twice (its effect's statement found a ceiling passed, decision 029) counts its shadow verdict once", async () => {
    const { world: w, admin } = await world(OLD_ORDERS);
    expect(await shadowOneRule(admin, FRAUD_WATCH, await noProof(admin.id))).toMatchObject({ ok: true });
    await db.tenant.update({ where: { id: w.tenantId }, data: { agentDailyCeilingCents: 1000 } });
    const before = await shadowSample("issue_refund", "(none)", "allow");
    const held = await refundNow(w, 2000);
    expect(held.json.approval?.preview.ceiling).toMatchObject({ name: "agent_daily_ceiling_cents" });
    expect(await shadowSample("issue_refund", "(none)", "allow")).toBe(before + 1);
  });
});
