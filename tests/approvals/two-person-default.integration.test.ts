import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import type { Approver } from "@/lib/approvals/decision/types";
import { db } from "@/lib/db";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { addPerson, createWorld } from "../support/world";

// The two-person rule as a new tenant gets it: the README's "above two_person_above_cents two different
// supervisors must approve" must bite within the amounts a call may ask, not only above the largest refund.

describe("two-person rule by default", () => {
  it("a refund of the largest amount a call may ask, at the default policy, needs two different supervisors", async () => {
    // Step-up is not what this test is about: high enough that it does not ask.
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { stepUpAboveCents: 10_000_000 } });
    const tenant = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
    expect(tenant.twoPersonAboveCents).toBe(50_000);
    const order = `ord_${Math.floor(Math.random() * 9_000_000) + 90_000_000}`;
    await db.order.create({
      data: {
        id: order,
        tenantId: world.tenantId,
        customerId: world.customers.ana,
        totalCents: 150_000,
        status: "delivered",
        addressLine1: "1 Elm St",
        postalCode: "94107",
        currency: "USD",
      },
    });
    const conversation = await agentConversation(world);
    const held = await proposeAsAgent(world, conversation, refund(order, 100_000));
    expect(held.json).toMatchObject({ code: "approval.required" });
    const approvalId = held.json.approval!.id;
    const first: Approver = { userId: world.users.supervisor, tenantId: world.tenantId, role: "SUPERVISOR" };
    expect(await approveRequest(first, approvalId)).toEqual({ ok: true, approvalId, status: "partial" });
    expect(await approveRequest(first, approvalId)).toMatchObject({ ok: false, code: "approval.same-approver" });
    expect(await db.refund.count({ where: { orderId: order } })).toBe(0);

    const secondId = await addPerson(world, `${world.users.supervisor}_2`, "SUPERVISOR", "Second");
    const second: Approver = { userId: secondId, tenantId: world.tenantId, role: "SUPERVISOR" };
    expect(await approveRequest(second, approvalId)).toMatchObject({ ok: true, status: "approved" });
    expect(await db.refund.count({ where: { orderId: order } })).toBe(1);
  });
});
