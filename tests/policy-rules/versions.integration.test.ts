import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { applyDueChanges, cancelChange, pendingChanges } from "@/lib/admin/changes/two-admin";
import {
  checkDraft,
  compareVersions,
  publishRules,
  rollbackRules,
  rulesItem,
  ruleSetHistory,
} from "@/lib/admin/rules/publishing/publish";
import { parseCases, type RuleCase } from "@/lib/policy-rules/cases/cases";
import { db } from "@/lib/db";
import { approveAs } from "../support/admin-changes";
import { conversationFor, newCallKey, propose } from "../support/api";
import { holdOpen, waitForLockWaiter } from "../support/locks";
import { noProof, provedFor } from "../support/step-up";
import { addPerson, createWorld, type World } from "../support/world";
import { FRAUD_WATCH, OLD_ORDERS } from "./examples";
import { ageWorld, daysAgo, putRules, refund } from "./support";

// Issue 38 through the functions the rules page's actions call: versions an admin can read and compare, the waiting
// change that shows the second admin its diff and replay, rollback classified like any publish, and the set's own
// test cases run at check and refused at publish when they fail.

const person = (world: World, id: string) => ({ id, tenantId: world.tenantId });

async function worldWithTwoAdmins() {
  const world = await createWorld();
  await ageWorld(world);
  const bea = `${world.users.admin}_bea`;
  await addPerson(world, bea, "ADMIN", "Bea");
  return { world, admin: person(world, world.users.admin), bea: person(world, bea) };
}

/** A refund of Ana's order o1004 placed `days` ago: the call's outcome code. */
async function refundOnOrderOfAge(world: World, days: number) {
  await db.order.update({ where: { id: world.orders.o1004 }, data: { placedAt: daysAgo(days) } });
  const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
  return (await propose(world.keys.agent, conversation, refund(world.orders.o1004, 1000), newCallKey())).json.code;
}

async function approveAsSecond(world: World, second: { id: string; tenantId: string }) {
  const [change] = await db.adminChange.findMany({
    where: { tenantId: world.tenantId, kind: "rules", status: "pending" },
  });
  expect(await approveAs(second, change)).toEqual({ ok: true });
  return change.id;
}

const BOTH = `${FRAUD_WATCH}\n\n${OLD_ORDERS}`;

const OLD_ORDER_HOLDS: RuleCase = {
  name: "an old order waits",
  facts: { customer: { age_days: 400 }, order: { age_days: 120 } },
  expect: { verdict: "hold", rule: "old-orders-wait" },
};

describe("rule versions, rollback and the second admin's review", () => {
  it("every version keeps its full text, author, time and the change that made it; any two compare line by line", async () => {
    const { world, admin, bea } = await worldWithTwoAdmins();
    await publishRules(admin, { text: BOTH, status: "live" }, await noProof(admin.id));
    const proof = await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(FRAUD_WATCH) });
    expect(await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, proof)).toMatchObject({
      ok: true,
      held: { mode: "second-admin" },
    });

    // The second admin's page: the full diff from the live version and the calls the change would decide otherwise.
    expect(await refundOnOrderOfAge(world, 120)).toBe("approval.required");
    const [waiting] = await pendingChanges(world.tenantId);
    expect(waiting.kind).toBe("rules");
    expect(waiting.rules!.baseVersion).toBe(1);
    const removed = waiting.rules!.diff.filter((line) => line.kind === "removed").map((line) => line.text);
    expect(removed).toEqual(["", ...OLD_ORDERS.split("\n")]);
    expect(waiting.rules!.diff.filter((line) => line.kind === "added")).toEqual([]);
    expect(waiting.rules!.replay).toMatchObject({
      differences: [{ tool: "issue_refund", amountCents: 1000, was: "hold", would: "allow" }],
      byRule: [{ rule: "old-orders-wait (dropped)", calls: 1 }],
    });

    const changeId = await approveAsSecond(world, bea);
    const [latest, first] = await ruleSetHistory(world.tenantId);
    expect(first).toMatchObject({
      version: 1,
      text: BOTH,
      author: expect.stringContaining("@acme.test"),
      changeId: null,
    });
    expect(latest).toMatchObject({
      version: 2,
      text: FRAUD_WATCH,
      changeId,
      approvedBy: expect.stringContaining("@"),
      restoresVersion: null,
    });
    expect(latest.createdAt).toBeInstanceOf(Date);

    const compared = await compareVersions(world.tenantId, 1, 2);
    expect(compared!.lines.filter((line) => line.kind === "removed").map((line) => line.text)).toContain(
      "when { resource.age_days > 90 };",
    );
    expect(compared!.lines.filter((line) => line.kind === "same").map((line) => line.text)).toEqual(
      FRAUD_WATCH.split("\n"),
    );
    expect(await compareVersions(world.tenantId, 1, 9)).toBeNull();
  });

  it("the review's replay is made once for each live version and hour: later page loads read it kept, an hour later or a new live version makes it again", async () => {
    const { world, admin } = await worldWithTwoAdmins();
    await publishRules(admin, { text: BOTH, status: "live" }, await noProof(admin.id));
    const proof = await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(FRAUD_WATCH) });
    expect(await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, proof)).toMatchObject({ held: {} });
    const { liveRuleSetId } = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
    const kept = (changeId: string) => db.ruleChangeReplay.findMany({ where: { changeId } });
    const dropped = { was: "hold", would: "allow", rules: ["old-orders-wait (dropped)"] };

    expect(await refundOnOrderOfAge(world, 120)).toBe("approval.required");
    const [first] = await pendingChanges(world.tenantId);
    expect(first.rules!.replay).toMatchObject({ decisions: 1, differences: [dropped] });

    // A call recorded since: the admin page and the Approvals page show the replay kept, not the decisions read again.
    expect(await refundOnOrderOfAge(world, 121)).toBe("approval.required");
    const [again] = await pendingChanges(world.tenantId);
    expect(again).toEqual(first);
    expect(await kept(first.id)).toEqual([
      { changeId: first.id, liveRuleSetId, report: first.rules!.replay, errors: [], replayedAt: expect.any(Date) },
    ]);

    // A replay kept for over an hour is made again: the review shows the days up to now, and a change waits 30 days.
    await db.ruleChangeReplay.update({
      where: { changeId: first.id },
      data: { replayedAt: new Date(Date.now() - 61 * 60_000) },
    });
    const [aged] = await pendingChanges(world.tenantId);
    expect(aged.rules!.replay).toMatchObject({ decisions: 2, differences: [dropped, dropped] });
    expect(await pendingChanges(world.tenantId)).toEqual([aged]);

    // Another live version is another input: the replay is made again, over both calls, and kept instead.
    const next = await putRules(world, BOTH);
    const [replayed] = await pendingChanges(world.tenantId);
    expect(replayed.rules!.replay).toMatchObject({ decisions: 2, differences: [dropped, dropped] });
    expect({ ...replayed, rules: { ...replayed.rules, replay: first.rules!.replay } }).toEqual(first);
    expect(await kept(first.id)).toEqual([
      {
        changeId: first.id,
        liveRuleSetId: next,
        report: replayed.rules!.replay,
        errors: [],
        replayedAt: expect.any(Date),
      },
    ]);
  });

  it("a change's kept replay is deleted with the decision that ends its wait: cancelled, expired, superseded or approved", async () => {
    const { world, admin, bea } = await worldWithTwoAdmins();
    await publishRules(admin, { text: BOTH, status: "live" }, await noProof(admin.id));
    const kept = () => db.ruleChangeReplay.count({ where: { change: { tenantId: world.tenantId } } });
    // Dropping a rule in force, held for the second admin and shown once: its replay is kept.
    const reviewed = async () => {
      const proof = await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(FRAUD_WATCH) });
      expect(await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, proof)).toMatchObject({
        held: { mode: "second-admin" },
      });
      const [waiting] = await pendingChanges(world.tenantId);
      expect(await kept()).toBe(1);
      return db.adminChange.findUniqueOrThrow({ where: { id: waiting.id } });
    };

    const cancelled = await reviewed();
    expect(await cancelChange(admin, cancelled.id)).toBe(true);
    expect(await kept()).toBe(0);

    const lapsed = await reviewed();
    await db.adminChange.update({ where: { id: lapsed.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await applyDueChanges();
    expect(await kept()).toBe(0);

    const stale = await reviewed();
    await putRules(world, BOTH);
    expect(await approveAs(bea, stale)).toMatchObject({ ok: false, code: "change.stale" });
    expect(await kept()).toBe(0);

    const approved = await reviewed();
    expect(await approveAs(bea, approved)).toEqual({ ok: true });
    expect(await kept()).toBe(0);
    const changes = await db.adminChange.findMany({
      where: { tenantId: world.tenantId },
      orderBy: { createdAt: "asc" },
    });
    expect(changes.map((change) => change.status)).toEqual(["cancelled", "expired", "superseded", "applied"]);
  });

  it("a first showing whose replay ends while its change is being cancelled keeps nothing", async () => {
    const { world, admin } = await worldWithTwoAdmins();
    await publishRules(admin, { text: BOTH, status: "live" }, await noProof(admin.id));
    const proof = await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(FRAUD_WATCH) });
    expect(await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, proof)).toMatchObject({ held: {} });
    const change = await db.adminChange.findFirstOrThrow({ where: { tenantId: world.tenantId, status: "pending" } });

    // The cancel is held after it closed the change, at a key the change would have minted, locked here.
    const key = await db.apiKey.create({
      data: {
        id: `key_${change.id}`,
        tenantId: world.tenantId,
        userId: world.users.agent,
        prefix: "tg_held",
        hash: `held-${change.id}`,
        pendingChangeId: change.id,
      },
    });
    const holder = await holdOpen((tx) => tx.$queryRaw`SELECT 1 FROM "ApiKey" WHERE "id" = ${key.id} FOR UPDATE`);
    const cancelling = cancelChange(admin, change.id);
    const cancelPid = await waitForLockWaiter(holder.pid, "the minted key's lock");

    // The page is shown meanwhile: it reads the change still waiting, replays it, and stores once the cancel ends.
    const showing = pendingChanges(world.tenantId);
    await waitForLockWaiter(cancelPid, "the cancelled change's lock");
    holder.release();
    await holder.done;
    expect(await cancelling).toBe(true);
    expect((await showing).map((shown) => shown.id)).toEqual([change.id]);
    expect(await db.adminChange.findUniqueOrThrow({ where: { id: change.id } })).toMatchObject({ status: "cancelled" });
    expect(await db.ruleChangeReplay.count({ where: { changeId: change.id } })).toBe(0);
  });

  it("a rollback that restores a dropped rule applies at once, brings back its verdicts and is audited", async () => {
    const { world, admin, bea } = await worldWithTwoAdmins();
    await publishRules(admin, { text: BOTH, status: "live", cases: [OLD_ORDER_HOLDS] }, await noProof(admin.id));
    expect(await refundOnOrderOfAge(world, 120)).toBe("approval.required");
    await publishRules(
      admin,
      { text: FRAUD_WATCH, status: "live" },
      await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(FRAUD_WATCH) }),
    );
    await approveAsSecond(world, bea);
    expect(await refundOnOrderOfAge(world, 121)).toBe("refund.issued");

    // Back to version 1: it only adds a rule to the live set, so it tightens and needs nobody else.
    expect(await rollbackRules(admin, 1, await noProof(admin.id))).toMatchObject({
      ok: true,
      published: { version: 3, status: "live" },
    });
    expect(await refundOnOrderOfAge(world, 122)).toBe("approval.required");
    const [restored] = await ruleSetHistory(world.tenantId);
    expect(restored).toMatchObject({ version: 3, text: BOTH, restoresVersion: 1, cases: [OLD_ORDER_HOLDS] });
    const audit = await db.auditLog.findMany({
      where: { tenantId: world.tenantId, action: "rules.published" },
      orderBy: { id: "asc" },
    });
    expect(audit.at(-1)!.detail).toMatchObject({ version: 3, status: "live", restoresVersion: 1, cases: 1 });
    expect(await rollbackRules(admin, 42, await noProof(admin.id))).toBeNull();
  });

  it("a rollback that drops a rule in force is loosening: step-up, then the second admin, who sees it is a rollback", async () => {
    const { world, admin, bea } = await worldWithTwoAdmins();
    await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, await noProof(admin.id));
    await publishRules(admin, { text: BOTH, status: "live" }, await noProof(admin.id));
    expect(await refundOnOrderOfAge(world, 120)).toBe("approval.required");

    expect(await rollbackRules(admin, 1, await noProof(admin.id))).toEqual({
      ok: false,
      code: "step-up.required",
      loosened: ["old-orders-wait"],
    });
    expect(await db.policyRuleSet.count({ where: { tenantId: world.tenantId } })).toBe(2);
    const proof = await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(FRAUD_WATCH) });
    expect(await rollbackRules(admin, 1, proof)).toMatchObject({ ok: true, held: { mode: "second-admin" } });
    const [waiting] = await pendingChanges(world.tenantId);
    expect(waiting.lines[0]).toContain("a rollback to version 1");
    expect(await refundOnOrderOfAge(world, 121)).toBe("approval.required");

    await approveAsSecond(world, bea);
    expect(await refundOnOrderOfAge(world, 122)).toBe("refund.issued");
    const [restored] = await ruleSetHistory(world.tenantId);
    expect(restored).toMatchObject({ version: 3, text: FRAUD_WATCH, restoresVersion: 1 });
    const audit = await db.auditLog.findMany({
      where: { tenantId: world.tenantId, action: "rules.published" },
      orderBy: { id: "asc" },
    });
    expect(audit.at(-1)!.detail).toMatchObject({ version: 3, restoresVersion: 1, approvedById: bea.id });
  });

  it("a loosening change of a lone admin that applies after its delay names no approver, not its proposer", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    await publishRules(admin, { text: BOTH, status: "live" }, await noProof(admin.id));
    const proof = await provedFor(admin.id, { kind: "admin.rules", digest: rulesItem(FRAUD_WATCH) });
    expect(await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, proof)).toMatchObject({
      ok: true,
      held: { mode: "delay" },
    });
    const change = await db.adminChange.findFirstOrThrow({ where: { tenantId: world.tenantId, kind: "rules" } });
    expect(await pendingChanges(world.tenantId)).toMatchObject([{ id: change.id, rules: { replay: {} } }]);
    expect(await db.ruleChangeReplay.count({ where: { changeId: change.id } })).toBe(1);
    await db.adminChange.update({ where: { id: change.id }, data: { applyAt: new Date(Date.now() - 1000) } });
    expect(await applyDueChanges()).toBeGreaterThanOrEqual(1);
    expect(await db.ruleChangeReplay.count({ where: { changeId: change.id } })).toBe(0);

    const [applied] = await ruleSetHistory(world.tenantId);
    expect(applied).toMatchObject({ version: 2, text: FRAUD_WATCH, changeId: change.id, approvedBy: null });
    expect(await db.policyRuleSet.findFirstOrThrow({ where: { tenantId: world.tenantId, version: 2 } })).toMatchObject({
      createdById: admin.id,
      approvedById: null,
    });
    const audit = await db.auditLog.findMany({ where: { tenantId: world.tenantId }, orderBy: { id: "asc" } });
    expect(audit.map((entry) => entry.action).slice(-2)).toEqual(["rules.published", "change.applied-after-delay"]);
    expect(audit.at(-2)!.detail).toMatchObject({ version: 2, changeId: change.id, approvedById: null });
    expect(await db.adminChange.findUniqueOrThrow({ where: { id: change.id } })).toMatchObject({
      status: "applied",
      decidedById: null,
    });
  });
});

describe("a rule set's own test cases", () => {
  const casesOf = (json: unknown) => {
    const parsed = parseCases(JSON.stringify(json));
    if (!parsed.ok) throw new Error(parsed.errors.join("; "));
    return parsed.cases;
  };

  it("run on Check: each case passes or says what it expected and got", () => {
    const checked = checkDraft(
      BOTH,
      casesOf([
        OLD_ORDER_HOLDS,
        {
          name: "watched is refused",
          facts: { customer: { fraud_watch: true } },
          expect: { verdict: "deny", code: "nope" },
        },
      ]),
    );
    expect(checked).toMatchObject({
      ok: true,
      cases: [
        { name: "an old order waits", passed: true },
        {
          name: "watched is refused",
          passed: false,
          expected: "deny (code nope)",
          got: 'deny by "fraud-watch" (code customer-on-fraud-watch)',
        },
      ],
    });
    expect(parseCases('[{"name": "x", "facts": {}, "expect": {"verdict": "maybe"}}]')).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/^case 1 \(expect\.verdict\)/)],
    });
    expect(
      checkDraft(BOTH, casesOf([{ name: "bad", facts: { order: { age_days: "old" } }, expect: { verdict: "allow" } }])),
    ).toMatchObject({ ok: true, cases: [{ passed: false, got: expect.stringContaining("facts.order.age_days") }] });
  });

  it("a set whose own case fails is not published: refused in words, nothing written, the old rules stay", async () => {
    const { world, admin } = await worldWithTwoAdmins();
    await publishRules(admin, { text: FRAUD_WATCH, status: "live" }, await noProof(admin.id));
    const wrong: RuleCase = { ...OLD_ORDER_HOLDS, expect: { verdict: "allow" } };
    for (const status of ["live", "shadow"] as const) {
      expect(await publishRules(admin, { text: BOTH, status, cases: [wrong] }, await noProof(admin.id))).toEqual({
        ok: false,
        code: "rules.cases-failed",
        errors: [
          'case "an old order waits": expected allow, got hold by "old-orders-wait" ("Refunds on orders older than 90 days wait for a supervisor")',
        ],
      });
    }
    expect(await db.policyRuleSet.count({ where: { tenantId: world.tenantId } })).toBe(1);
    expect(await refundOnOrderOfAge(world, 120)).toBe("refund.issued");
    expect(
      await publishRules(admin, { text: BOTH, status: "live", cases: [OLD_ORDER_HOLDS] }, await noProof(admin.id)),
    ).toMatchObject({ ok: true, published: { version: 2 } });
  });

  const policyTest = (args: string[]) =>
    spawnSync(
      process.execPath,
      [
        path.join("node_modules", "tsx", "dist", "cli.mjs"),
        "--conditions=react-server",
        "scripts/policy-test.ts",
        ...args,
      ],
      { encoding: "utf8", env: process.env },
    );

  it("npm run policy:test passes the shipped sets, and fails a tenant's set whose case fails", async () => {
    for (const set of ["rules/example.cedar", "rules/default.cedar"]) {
      const run = policyTest(["--rules", set]);
      expect(run.stdout).toMatch(/: (\d+) of \1 cases pass/);
      expect(run.status).toBe(0);
    }
    const { world, admin } = await worldWithTwoAdmins();
    await publishRules(admin, { text: BOTH, status: "live", cases: [OLD_ORDER_HOLDS] }, await noProof(admin.id));
    const passing = policyTest(["--tenant", world.tenantId]);
    expect(passing.stdout).toContain(`${world.tenantId} version 1: 1 of 1 cases pass`);
    expect(passing.status).toBe(0);
    // Stored before cases were checked (or written by hand): the command says which case fails, and exits 1.
    await db.policyRuleSet.updateMany({
      where: { tenantId: world.tenantId },
      data: {
        cases: [{ name: OLD_ORDER_HOLDS.name, facts: { order: { age_days: 120 } }, expect: { verdict: "allow" } }],
      },
    });
    const failing = policyTest(["--tenant", world.tenantId]);
    expect(failing.stdout).toContain('FAIL  an old order waits: expected allow, got hold by "old-orders-wait"');
    expect(failing.status).toBe(1);
    expect(policyTest(["--tenant", "t_missing"]).status).toBe(2);
  });
});
