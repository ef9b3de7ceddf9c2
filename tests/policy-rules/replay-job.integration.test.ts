import { describe, expect, it } from "vitest";
import { replayProgress, replayRules, runQueuedReplays, startReplay } from "@/lib/admin/rules/replay";
import { db } from "@/lib/db";
import { REPLAY_LIMITS } from "@/lib/policy-rules/replay/replay";
import { conversationFor, newCallKey, propose } from "../support/api";
import { createWorld, moreOrders } from "../support/world";
import { ageWorld, refund } from "./support";

// Issue 38: the rules page's replay runs in the instance's job runner, off the request path, stores its progress,
// and says how many decisions it read and whether older ones remain, instead of stopping silently at a limit.

const HOLD_EVERY_REFUND = `@id("every-refund") @hold("every refund waits") forbid (principal, action == Action::"issue_refund", resource);`;

/** A tenant with five refunds, and the id of a replay queued over them of a rule that holds every refund. */
async function replayQueuedOverFiveRefunds() {
  const world = await createWorld();
  await ageWorld(world);
  for (const order of await moreOrders(world, 5)) {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    await propose(world.keys.agent, conversation, refund(order, 1000), newCallKey());
  }
  const admin = { id: world.users.admin, tenantId: world.tenantId };
  const started = await startReplay(admin, { text: HOLD_EVERY_REFUND, days: 7, limit: 100 });
  return { world, id: started.ok ? started.id : "" };
}

describe("replay in the job runner", () => {
  it("reads up to its limit, says older decisions remain, and reads them all when asked to go further", async () => {
    const world = await createWorld();
    await ageWorld(world);
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    for (const order of await moreOrders(world, 5)) {
      const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
      expect((await propose(world.keys.agent, conversation, refund(order, 1000), newCallKey())).json.code).toBe(
        "refund.issued",
      );
    }

    expect(await startReplay(admin, { text: "forbid (", days: 7, limit: 3 })).toMatchObject({ ok: false });
    const first = await startReplay(admin, { text: HOLD_EVERY_REFUND, days: 7, limit: 3 });
    expect(first.ok).toBe(true);
    const firstId = first.ok ? first.id : "";
    expect(await replayProgress(world.tenantId, firstId)).toMatchObject({ status: "queued", read: 0, report: null });
    expect(await replayProgress(world.otherTenantId, firstId)).toBeNull();

    expect(await runQueuedReplays()).toBeGreaterThanOrEqual(1);
    expect(await replayProgress(world.tenantId, firstId)).toMatchObject({
      status: "done",
      read: 3,
      more: true,
      report: { decisions: 3, more: true, byRule: [{ rule: "every-refund", calls: 3 }] },
    });

    const further = await startReplay(admin, { text: HOLD_EVERY_REFUND, days: 7, limit: 30 });
    await runQueuedReplays();
    const done = await replayProgress(world.tenantId, further.ok ? further.id : "");
    expect(done).toMatchObject({ status: "done", read: 5, more: false });
    expect(done!.report).not.toHaveProperty("more");
    // The same report the review and the command compute at once.
    expect(await replayRules(world.tenantId, HOLD_EVERY_REFUND, 7)).toEqual({ ok: true, report: done!.report });
    expect(await db.ruleReplay.count({ where: { tenantId: world.tenantId, status: "done" } })).toBe(2);
  });

  it("a replay longer than a run of the job pauses where it stopped and ends on a later run with the same report", async () => {
    const { world, id } = await replayQueuedOverFiveRefunds();
    // Runs of a millisecond, two decisions a page: each run reads a page, then pauses.
    const seen: number[] = [];
    for (let run = 0; run < 10; run++) {
      await runQueuedReplays({ sliceMs: 1, page: 2 });
      const progress = (await replayProgress(world.tenantId, id))!;
      seen.push(progress.read);
      if (progress.status === "done") break;
      expect(progress.status).toBe("queued");
    }
    expect(seen.slice(0, 2)).toEqual([2, 4]);
    const done = (await replayProgress(world.tenantId, id))!;
    expect(done).toMatchObject({ status: "done", read: 5, more: false });
    expect(await replayRules(world.tenantId, HOLD_EVERY_REFUND, 7)).toEqual({ ok: true, report: done.report });
  });

  it("a replay an instance stopped in the middle of is taken up again a minute later, from its last pause, and ends with the same report", async () => {
    const { world, id } = await replayQueuedOverFiveRefunds();
    await runQueuedReplays({ sliceMs: 1, page: 2 });
    expect(await replayProgress(world.tenantId, id)).toMatchObject({ status: "queued", read: 2 });
    // The next run's instance stops after its first page: the row says running, with that page counted.
    await db.ruleReplay.update({ where: { id }, data: { status: "running", read: 4 } });

    await runQueuedReplays();
    expect(await replayProgress(world.tenantId, id)).toMatchObject({ status: "running", read: 4 });
    await db.ruleReplay.update({ where: { id }, data: { updatedAt: new Date(Date.now() - 61_000) } });
    await runQueuedReplays();
    const done = (await replayProgress(world.tenantId, id))!;
    expect(done).toMatchObject({ status: "done", read: 5, more: false });
    expect(await replayRules(world.tenantId, HOLD_EVERY_REFUND, 7)).toEqual({ ok: true, report: done.report });
  });

  it("a tenant has at most 5 replays waiting or running: a burst past them is refused with nothing queued, and a replay is taken again once one ends", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const input = { text: HOLD_EVERY_REFUND, days: 7, limit: 10 };
    const replays = () =>
      db.ruleReplay.findMany({ where: { tenantId: world.tenantId }, orderBy: { createdAt: "asc" } });

    // Bursts of requests at once, each answered by its own transaction: in every one, exactly 5 are queued.
    expect(REPLAY_LIMITS.perTenant).toBe(5);
    for (let round = 0; round < 5; round++) {
      const burst = await Promise.all(Array.from({ length: 12 }, () => startReplay(admin, input)));
      expect(burst.filter((started) => started.ok)).toHaveLength(5);
      const refused = burst.filter((started) => !started.ok);
      expect(refused).toHaveLength(7);
      for (const answer of refused)
        expect(answer).toEqual({
          ok: false,
          code: "rules.too-many-replays",
          message: expect.stringContaining("Wait for one of them to finish, then replay again; nothing was queued."),
        });
      const waiting = await db.ruleReplay.findMany({ where: { tenantId: world.tenantId, status: "queued" } });
      expect(waiting).toHaveLength(5);
      expect(await replays()).toHaveLength(5 * (round + 1));
      if (round < 4) await db.ruleReplay.updateMany({ where: { tenantId: world.tenantId }, data: { status: "done" } });
    }
    const queued = (await replays()).filter((row) => row.status === "queued");

    // Another tenant's admin is not held up by this one's replays.
    expect(await startReplay({ id: world.users.otherSupervisor, tenantId: world.otherTenantId }, input)).toMatchObject({
      ok: true,
    });

    // A replay the runner holds still counts; one an instance left running ten minutes ago counts no more.
    await db.ruleReplay.update({ where: { id: queued[0].id }, data: { status: "running" } });
    expect(await startReplay(admin, input)).toMatchObject({ ok: false, code: "rules.too-many-replays" });
    expect(await replays()).toHaveLength(25);
    await db.ruleReplay.update({ where: { id: queued[0].id }, data: { updatedAt: new Date(Date.now() - 600_000) } });
    expect(await startReplay(admin, input)).toMatchObject({ ok: true });
    expect(await startReplay(admin, input)).toMatchObject({ ok: false, code: "rules.too-many-replays" });
    expect(await replays()).toHaveLength(26);

    await runQueuedReplays();
    expect((await replays()).filter((row) => row.status !== "done")).toEqual([]);
    expect(await startReplay(admin, input)).toMatchObject({ ok: true });
    await runQueuedReplays();
  });
});
