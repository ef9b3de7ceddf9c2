import nodemailer from "nodemailer";
import { describe, expect, it, vi } from "vitest";
import { decideFromLink } from "@/lib/approvals/email-links/decide";
import { openApprovalLink } from "@/lib/approvals/email-links/open";
import { sha256Hex } from "@/lib/canonical";
import { db } from "@/lib/db";
import { queueMessages } from "@/lib/db/outbox";
import { deliverOutbox } from "@/lib/mail/delivery";
import { getToolCall } from "../support/api";
import { holdRefund, supervisorOf } from "../support/calls";
import { ownExternals, sinkTransport } from "../support/externals";
import { createWorld, type World } from "../support/world";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { jar } from "../support/cookie-jar";

// The link in an approval email: read from what the SMTP sink received, opened with the same functions the
// link's page and its decide action call.

vi.mock("next/headers", async () => (await import("../support/cookie-jar")).nextHeadersMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
const { decideFromLinkAction } = await import("@/lib/approvals/email-links/actions");

const externals = ownExternals();

/** Delivers the tenant's outbox to the sink and returns the token of the link the supervisor's email carries. */
async function emailedToken(world: World): Promise<string> {
  const supervisor = await db.user.findUniqueOrThrow({ where: { id: world.users.supervisor } });
  const before = externals.sink.messages.length;
  for (let round = 0; round < 5; round++)
    if ((await deliverOutbox({ delivery: sinkTransport(externals), limit: 100, tenantId: world.tenantId })).sent === 0)
      break;
  const mail = externals.sink.messages.slice(before).filter((message) => message.to.includes(supervisor.email));
  expect(mail).toHaveLength(1);
  const text = mail[0].raw.replace(/=\r?\n/g, "");
  const match = /\/approvals\/r\/([A-Za-z0-9_-]{43})/.exec(text);
  expect(match).not.toBeNull();
  return match![1];
}

/** A link with its token, as a queued approval email carries it. */
const LINK_WITH_TOKEN = /\/approvals\/r\/[A-Za-z0-9_-]{43}/;

const supervisorUser = (world: World) => ({ id: world.users.supervisor, tenantId: world.tenantId });

async function effects(world: World, approvalId: string) {
  const [order, refunds, request, links, stats] = await Promise.all([
    db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 }, select: { refundedCents: true, version: true } }),
    db.refund.count({ where: { orderId: world.orders.o1004 } }),
    db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId }, select: { status: true, decidedById: true } }),
    db.approvalLink.findMany({ where: { approvalId }, select: { usedAt: true }, orderBy: { id: "asc" } }),
    externals.stats(),
  ]);
  return { order, refunds, request, links, provider: stats.totalsByOrder[world.orders.o1004] ?? 0 };
}

describe("deciding from the approval email's link", () => {
  it("stores only the token's hash, one link per supervisor, dead when the request expires", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world);
    const token = await emailedToken(world);
    const links = await db.approvalLink.findMany({ where: { approvalId } });
    const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({
      recipientId: world.users.supervisor,
      tokenHash: sha256Hex(token),
      usedAt: null,
      expiresAt: request.expiresAt,
    });
    expect(JSON.stringify(links)).not.toContain(token);
  });

  it("once the email is sent the outbox keeps its recipient, subject and text but not the token, which the recipient received", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world);
    const queued = await db.outboxMessage.findFirstOrThrow({
      where: { tenantId: world.tenantId, kind: "approval_email" },
    });
    expect(queued.body).toMatch(LINK_WITH_TOKEN);
    const token = await emailedToken(world);
    const sent = await db.outboxMessage.findUniqueOrThrow({ where: { id: queued.id } });
    expect(sent).toMatchObject({ status: "sent", recipient: queued.recipient, subject: queued.subject });
    expect(JSON.stringify(sent)).not.toContain(token);
    expect(sent.body).not.toMatch(LINK_WITH_TOKEN);
    expect(sent.body).toBe(queued.body.replace(`/approvals/r/${token}`, "/approvals/r/[removed]"));
    expect(sent.body).toContain(`Request: ${approvalId}`);
    const [link] = await db.approvalLink.findMany({ where: { approvalId } });
    expect(link.tokenHash).toBe(sha256Hex(token));
    expect((await openApprovalLink(supervisorUser(world), token)).ok).toBe(true);
  });

  it("an approval email keeps its token through a failed try, and not once it is given up", async () => {
    const world = await createWorld();
    await holdRefund(world);
    const down = nodemailer.createTransport({ host: "127.0.0.1", port: 1, ignoreTLS: true, connectionTimeout: 500 });
    const row = () =>
      db.outboxMessage.findFirstOrThrow({ where: { tenantId: world.tenantId, kind: "approval_email" } });
    const tryOnce = async () => {
      await db.outboxMessage.updateMany({ where: { tenantId: world.tenantId }, data: { nextAttemptAt: new Date(0) } });
      await deliverOutbox({ delivery: down, limit: 100, tenantId: world.tenantId });
    };
    await tryOnce();
    const retried = await row();
    expect(retried).toMatchObject({ status: "pending", attempts: 1 });
    expect(retried.body).toMatch(LINK_WITH_TOKEN);
    // The next try is the last of the default budget of twelve.
    await db.outboxMessage.update({ where: { id: retried.id }, data: { attempts: 11 } });
    await tryOnce();
    const dead = await row();
    expect(dead).toMatchObject({ status: "dead", attempts: 12 });
    expect(dead.body).not.toMatch(LINK_WITH_TOKEN);
    expect(dead.body).toContain("/approvals/r/[removed]");
  });

  it("a sent mail keeps every other text with the link's path as it was sent: an agent's argument, another kind's body", async () => {
    const world = await createWorld();
    // As an upstream call's approval email shows its arguments (lib/approvals/notify/upstream-requested.ts), and a
    // mail of another kind whose text has the path on a line of its own.
    const upstream = `Held because: a rule\n"path": "/approvals/r/${"A".repeat(43)}"\n"url": "https://x.test/approvals/r/abc"\nRequest: apr_1`;
    const other = `See:\nhttps://x.test/approvals/r/${"B".repeat(43)}\n`;
    const ids = await queueMessages(db, { tenantId: world.tenantId, orderId: null, toolCallId: null }, [
      { kind: "approval_email", recipient: "s@x.test", subject: "Approval needed", body: upstream },
      { kind: "status_email", recipient: "c@x.test", subject: "Your order", body: other },
    ]);
    // Rounds, as another sender on the same database may claim a row first and leave it to retry.
    for (let round = 0; round < 5; round++) {
      await db.outboxMessage.updateMany({ where: { id: { in: ids } }, data: { nextAttemptAt: new Date(0) } });
      await deliverOutbox({ delivery: { sendMail: async () => undefined }, limit: 100, tenantId: world.tenantId });
    }
    const sent = await db.outboxMessage.findMany({ where: { id: { in: ids } }, orderBy: { kind: "asc" } });
    expect(sent.map(({ status, body, lastError }) => ({ status, body, lastError }))).toEqual([
      { status: "sent", body: upstream, lastError: null },
      { status: "sent", body: other, lastError: null },
    ]);
  });

  it("approving from the link may lower a refund, as the desk may: a raise or another field is refused and leaves the link usable", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world);
    const token = await emailedToken(world);
    const view = await openApprovalLink(supervisorUser(world), token);
    if (!view.ok) throw new Error(view.message);
    const edit = (changes: Record<string, unknown>) => ({
      tool: "issue_refund",
      arguments: { ...view.request.arguments, ...changes },
    });

    for (const [changes, message] of [
      [{ amount_cents: 9000 }, "an approval can only lower amount_cents (at most 8000)"],
      [{ order_id: world.orders.o1001 }, "an approval cannot change order_id"],
    ] as const) {
      expect(await decideFromLink(supervisorOf(world), token, "approve", null, { edit: edit(changes) })).toMatchObject({
        ok: false,
        message: expect.stringContaining(message),
      });
      expect(await effects(world, approvalId)).toMatchObject({
        order: { refundedCents: 0 },
        refunds: 0,
        request: { status: "pending" },
        links: [{ usedAt: null }],
        provider: 0,
      });
    }

    const lowered = await decideFromLink(supervisorOf(world), token, "approve", null, {
      edit: edit({ amount_cents: 5000 }),
    });
    expect(lowered).toMatchObject({ ok: true, status: "approved", outcome: { code: "refund.issued" } });
    expect(await effects(world, approvalId)).toMatchObject({
      order: { refundedCents: 5000 },
      refunds: 1,
      request: { status: "approved", decidedById: world.users.supervisor },
      provider: 5000,
    });
    const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    expect(request.approvedArgs).toMatchObject({ amount_cents: 5000, order_id: world.orders.o1004 });
  });

  it("a mail scanner opening the link twice decides nothing; the supervisor's one post executes once; a second post is refused", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    const token = await emailedToken(world);
    const before = await effects(world, approvalId);

    const first = await openApprovalLink(supervisorUser(world), token);
    const second = await openApprovalLink(supervisorUser(world), token);
    expect(first).toMatchObject({
      ok: true,
      usable: true,
      request: { id: approvalId, status: "pending", impactCents: 8000, customerEmail: expect.stringContaining("ana-") },
    });
    expect(second).toEqual(first);
    expect(await effects(world, approvalId)).toEqual(before);

    const decided = await decideFromLink(supervisorOf(world), token, "approve", null);
    expect(decided).toMatchObject({ ok: true, status: "approved", outcome: { code: "refund.issued" } });
    const again = await decideFromLink(supervisorOf(world), token, "deny", "changed my mind");
    expect(again).toMatchObject({ ok: false, code: "link.used" });
    const after = await effects(world, approvalId);
    expect(after).toMatchObject({
      order: { refundedCents: 8000 },
      refunds: 1,
      request: { status: "approved", decidedById: world.users.supervisor },
      provider: 8000,
    });
    expect(after.links[0].usedAt).not.toBeNull();
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      kind: "executed",
      code: "refund.issued",
    });
    expect(await openApprovalLink(supervisorUser(world), token)).toMatchObject({
      ok: true,
      usable: false,
      problem: "link.used",
    });
  });

  it("two posts of the same link at once decide once", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world);
    const token = await emailedToken(world);
    const results = await Promise.all([
      decideFromLink(supervisorOf(world), token, "approve", null),
      decideFromLink(supervisorOf(world), token, "approve", null),
    ]);
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    expect(results.find((result) => !result.ok)).toMatchObject({ code: "link.used" });
    expect(await effects(world, approvalId)).toMatchObject({
      refunds: 1,
      order: { refundedCents: 8000 },
      provider: 8000,
    });
  });

  it("denies with the reason, which reaches the agent's call", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    const token = await emailedToken(world);
    expect(await decideFromLink(supervisorOf(world), token, "deny", "refunded by phone")).toMatchObject({
      ok: true,
      status: "denied",
    });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "denied",
      note: "refunded by phone",
    });
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      kind: "denied",
      code: "approval.denied",
    });
    expect(await effects(world, approvalId)).toMatchObject({ refunds: 0, order: { refundedCents: 0 }, provider: 0 });
  });

  it("a reason the database cannot store is the action's input.invalid, as on the desk: nothing decided, the link unused", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    const token = await emailedToken(world);
    jar.cookie = await personCookie(world.users.supervisor);
    for (const note of ["refunded\u0000by phone", "refunded \ud800 by phone"]) {
      expect(await decideFromLinkAction({ token, decision: "deny", note })).toMatchObject({
        ok: false,
        code: "input.invalid",
      });
    }
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "pending",
      decidedById: null,
    });
    expect((await getToolCall(world.keys.agent, callId)).json.code).toBe("approval.required");
    expect(await effects(world, approvalId)).toMatchObject({ refunds: 0, links: [{ usedAt: null }] });
    expect(await decideFromLinkAction({ token, decision: "deny", note: "refunded by phone" })).toMatchObject({
      ok: true,
      data: { ok: true, status: "denied" },
    });
  });

  it("a decision the request refuses (a denial without a reason, an approval that needs step-up) gives the link back", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world, { amount: 12_000 });
    const token = await emailedToken(world);
    expect(await decideFromLink(supervisorOf(world), token, "deny", " \u200b ")).toMatchObject({
      ok: false,
      code: "approval.reason-required",
    });
    expect(await decideFromLink(supervisorOf(world), token, "approve", null)).toMatchObject({
      ok: false,
      code: "approval.step-up-required",
    });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "pending",
    });
    expect(await decideFromLink(supervisorOf(world), token, "deny", "refunded by phone")).toMatchObject({
      ok: true,
      status: "denied",
    });
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      code: "approval.denied",
      reason: "refunded by phone",
    });
  });

  it("claims the link inside the decision's transaction: a host that dies mid-decision leaves the link unused", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world);
    const token = await emailedToken(world);
    // A trigger holds the decision at its write of the request, after the link's claim; meanwhile the decision's
    // connection is ended, as it is when the process dies.
    const hold = `hold_${approvalId.toLowerCase().replace(/[^a-z0-9]/g, "")}`;
    await db.$executeRawUnsafe(
      `CREATE FUNCTION ${hold}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$`,
    );
    await db.$executeRawUnsafe(
      `CREATE TRIGGER ${hold} BEFORE UPDATE ON "ApprovalRequest" FOR EACH ROW WHEN (OLD."id" = '${approvalId}') EXECUTE FUNCTION ${hold}()`,
    );
    try {
      const deciding = decideFromLink(supervisorOf(world), token, "deny", "refunded by phone");
      let held: { pid: number }[] = [];
      for (let tries = 0; held.length === 0 && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        held = await db.$queryRawUnsafe<{ pid: number }[]>(
          `SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%UPDATE "ApprovalRequest"%'`,
        );
      }
      expect(held).toHaveLength(1);
      // Seen from outside while the decision is held: the link is not used yet.
      expect((await effects(world, approvalId)).links).toEqual([{ usedAt: null }]);
      await db.$queryRawUnsafe(`SELECT pg_terminate_backend(${held[0].pid})`);
      expect(await deciding).toMatchObject({ ok: false, code: "host.error" });
    } finally {
      await db.$executeRawUnsafe(`DROP TRIGGER IF EXISTS ${hold} ON "ApprovalRequest"`);
      await db.$executeRawUnsafe(`DROP FUNCTION IF EXISTS ${hold}()`);
    }
    expect(await effects(world, approvalId)).toMatchObject({
      request: { status: "pending" },
      links: [{ usedAt: null }],
    });
    expect(await decideFromLink(supervisorOf(world), token, "deny", "refunded by phone")).toMatchObject({
      ok: true,
      status: "denied",
    });
  });

  it("refuses an expired link, another person's link, another tenant's and a made-up token, and changes nothing", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world);
    const token = await emailedToken(world);
    const before = await effects(world, approvalId);
    const other = { userId: world.users.otherSupervisor, tenantId: world.otherTenantId, role: "SUPERVISOR" };
    expect(await openApprovalLink({ id: other.userId, tenantId: other.tenantId }, token)).toMatchObject({
      ok: false,
      code: "link.not-found",
    });
    expect(await decideFromLink(other, token, "approve", null)).toMatchObject({ ok: false, code: "link.not-found" });
    expect(await decideFromLink(supervisorOf(world), "A".repeat(43), "approve", null)).toMatchObject({
      ok: false,
      code: "link.not-found",
    });
    expect(await decideFromLink(supervisorOf(world), `${token}x`, "approve", null)).toMatchObject({
      ok: false,
      code: "link.not-found",
    });
    const admin = { userId: world.users.admin, tenantId: world.tenantId, role: "SUPERVISOR" };
    expect(await openApprovalLink({ id: admin.userId, tenantId: admin.tenantId }, token)).toMatchObject({
      ok: false,
      code: "link.other-recipient",
    });
    expect(await decideFromLink(admin, token, "approve", null)).toMatchObject({
      ok: false,
      code: "link.other-recipient",
    });
    expect(await effects(world, approvalId)).toEqual(before);

    await db.approvalLink.updateMany({ where: { approvalId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await db.approvalRequest.update({ where: { id: approvalId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await decideFromLink(supervisorOf(world), token, "approve", null)).toMatchObject({
      ok: false,
      code: "link.expired",
    });
    expect(await openApprovalLink(supervisorUser(world), token)).toMatchObject({
      ok: true,
      usable: false,
      problem: "link.expired",
    });
    expect(await effects(world, approvalId)).toMatchObject({
      refunds: 0,
      order: { refundedCents: 0 },
      provider: 0,
      request: { status: "pending" },
    });
  });
});
