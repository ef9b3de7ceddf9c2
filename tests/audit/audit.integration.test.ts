import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { exportDecisionLog } from "@/lib/audit/export";
import { GENESIS, sealLogs, verifyTenant } from "@/lib/audit/seal";
import { db, transaction } from "@/lib/db";
import { propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund, supervisorOf } from "../support/calls";
import { sealAll } from "../support/seal";
import { createWorld, type World } from "../support/world";

/** A few decisions of every kind: executed read and refund, a held refund, a rejected proposal. */
async function someDecisions(world: World) {
  const conversation = await agentConversation(world);
  await propose(world.keys.agent, conversation, { name: "get_order", arguments: { order_id: world.orders.o1001 } });
  await proposeAsAgent(world, conversation, refund(world.orders.o1001, 1000));
  await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
  await propose(world.keys.agent, conversation, { name: "get_order", arguments: { order_id: 7 } });
}

/** What someone with database access could do: triggers off for this one transaction. */
async function tamper(statement: (tx: Parameters<Parameters<typeof db.$transaction>[0]>[0]) => Promise<unknown>) {
  await db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET LOCAL session_replication_role = replica");
    await statement(tx);
  });
}

async function logIds(tenantId: string) {
  return (await db.decisionLog.findMany({ where: { tenantId }, orderBy: { id: "asc" }, select: { id: true } })).map(
    (row) => row.id,
  );
}

describe("the sealed decision log", () => {
  it("seals every row of a tenant in a chain, and verifies clean", async () => {
    const world = await createWorld();
    await someDecisions(world);
    const first = await sealAll(world.tenantId);
    expect(first).toMatchObject({ problem: null, rowsNotYetSealed: 0 });
    expect(first.rowsSealed).toBe(await db.decisionLog.count({ where: { tenantId: world.tenantId } }));
    await someDecisions(world);
    const second = await sealAll(world.tenantId);
    expect(second).toMatchObject({
      problem: null,
      rowsNotYetSealed: 0,
      rowsSealed: await db.decisionLog.count({ where: { tenantId: world.tenantId } }),
    });
    const seals = await db.decisionSeal.findMany({
      where: { tenantId: world.tenantId, log: "decision" },
      orderBy: { seq: "asc" },
    });
    expect(seals.length).toBeGreaterThanOrEqual(2);
    expect(seals[0]).toMatchObject({ seq: 1, prevHash: GENESIS, fromTxid: 0n });
    for (let i = 1; i < seals.length; i++)
      expect(seals[i]).toMatchObject({ seq: i + 1, prevHash: seals[i - 1].hash, fromTxid: seals[i - 1].toTxid });
    expect(second.head).toBe(seals.at(-1)!.hash);
    // Seals themselves are append-only in the database.
    await expect(db.decisionSeal.delete({ where: { id: seals[0].id } })).rejects.toThrow(/append-only/);
  });

  it("names a row altered with SQL after it was sealed", async () => {
    const world = await createWorld();
    await someDecisions(world);
    await sealAll(world.tenantId);
    const ids = await logIds(world.tenantId);
    await tamper((tx) => tx.$executeRaw`UPDATE "DecisionLog" SET "code" = 'approval.denied' WHERE "id" = ${ids[2]}`);
    const result = await verifyTenant(world.tenantId);
    expect(result.problem).toMatchObject({ kind: "altered", rowId: String(ids[2]) });
    // The operator's command says the same, and fails.
    const run = spawnSync(
      process.execPath,
      [
        path.join("node_modules", "tsx", "dist", "cli.mjs"),
        "--conditions=react-server",
        "scripts/audit-verify.ts",
        world.tenantId,
      ],
      { encoding: "utf8", env: process.env },
    );
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`${world.tenantId}: FAILED at seal \\d+: altered row ${ids[2]}:`));
  });

  it("names a supervisor's decision whose recorded reason was rewritten after it was sealed", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const held = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    expect(await denyRequest(supervisorOf(world), held.json.approval!.id, "duplicate request")).toMatchObject({
      ok: true,
      status: "denied",
    });
    await sealAll(world.tenantId);
    const [decision] = await db.decisionLog.findMany({
      where: { tenantId: world.tenantId, actorId: world.users.supervisor },
      select: { id: true, detail: true },
    });
    expect(decision.detail).toEqual({ reason: "duplicate request" });
    await tamper(
      (tx) =>
        tx.$executeRaw`UPDATE "DecisionLog" SET "detail" = '{"reason": "customer asked twice"}'::jsonb WHERE "id" = ${decision.id}`,
    );
    expect((await verifyTenant(world.tenantId)).problem).toMatchObject({ kind: "altered", rowId: String(decision.id) });
  });

  it("names a row deleted with SQL after it was sealed", async () => {
    const world = await createWorld();
    await someDecisions(world);
    await sealAll(world.tenantId);
    const ids = await logIds(world.tenantId);
    await tamper((tx) => tx.$executeRaw`DELETE FROM "DecisionLog" WHERE "id" = ${ids[1]}`);
    expect((await verifyTenant(world.tenantId)).problem).toMatchObject({ kind: "removed", rowId: String(ids[1]) });
  });

  it("names the first of two rows whose contents were swapped", async () => {
    const world = await createWorld();
    await someDecisions(world);
    await sealAll(world.tenantId);
    const ids = await logIds(world.tenantId);
    await tamper(async (tx) => {
      await tx.$executeRaw`UPDATE "DecisionLog" SET "id" = -1 WHERE "id" = ${ids[1]}`;
      await tx.$executeRaw`UPDATE "DecisionLog" SET "id" = ${ids[1]} WHERE "id" = ${ids[3]}`;
      await tx.$executeRaw`UPDATE "DecisionLog" SET "id" = ${ids[3]} WHERE "id" = -1`;
    });
    expect((await verifyTenant(world.tenantId)).problem).toMatchObject({ kind: "reordered", rowId: String(ids[1]) });
  });

  it("names a row forged into a sealed range, and a seal whose recorded hashes were rewritten", async () => {
    const world = await createWorld();
    await someDecisions(world);
    await sealAll(world.tenantId);
    const [seal] = await db.decisionSeal.findMany({
      where: { tenantId: world.tenantId, log: "decision" },
      orderBy: { seq: "asc" },
      take: 1,
    });
    // The database gives an inserted row its own transaction id; only with the triggers off can one be chosen.
    let forged!: { id: bigint };
    await tamper(async (tx) => {
      [forged] = await tx.$queryRaw<{ id: bigint }[]>`
        INSERT INTO "DecisionLog" ("tenantId", "toolName", "kind", "stage", "code", "latencyMs", "txid")
        VALUES (${world.tenantId}, 'issue_refund', 'executed', 'execute', 'refund.issued', 1, ${seal.fromTxid}) RETURNING "id"`;
    });
    expect((await verifyTenant(world.tenantId)).problem).toMatchObject({ kind: "inserted", rowId: String(forged.id) });
    await tamper(
      (tx) => tx.$executeRaw`UPDATE "DecisionSeal" SET "rowHashes"[1] = ${"f".repeat(64)} WHERE "id" = ${seal.id}`,
    );
    expect((await verifyTenant(world.tenantId)).problem).toMatchObject({ kind: "seal-altered", seq: seal.seq });
  });

  it("a row whose transaction commits after later rows is sealed late, never skipped", async () => {
    const world = await createWorld();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let appended!: () => void;
    const started = new Promise<void>((resolve) => (appended = resolve));
    const slow = transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO "DecisionLog" ("tenantId", "toolName", "kind", "stage", "code", "latencyMs") VALUES (${world.tenantId}, 'get_order', 'executed', 'execute', 'order.read', 1)`;
      appended();
      await held;
    });
    await started;
    await someDecisions(world);
    await sealLogs();
    // Nothing at or after the open transaction is sealed while it runs.
    const before = await verifyTenant(world.tenantId);
    expect(before.problem).toBeNull();
    expect(before.rowsNotYetSealed).toBe(await db.decisionLog.count({ where: { tenantId: world.tenantId } }));
    release();
    await slow;
    const after = await sealAll(world.tenantId);
    expect(after).toMatchObject({
      problem: null,
      rowsNotYetSealed: 0,
      rowsSealed: await db.decisionLog.count({ where: { tenantId: world.tenantId } }),
    });
  });
});

describe("exporting the decision log", () => {
  const person = (world: World, who: "supervisor" | "admin" | "agent" | "otherSupervisor") => ({
    id: world.users[who],
    email: `${who}@example.test`,
    name: who,
    role: ({ supervisor: "SUPERVISOR", admin: "ADMIN", agent: "AGENT", otherSupervisor: "SUPERVISOR" } as const)[who],
    tenantId: who === "otherSupervisor" ? world.otherTenantId : world.tenantId,
    tenantName: who === "otherSupervisor" ? "Other" : "World",
  });
  const range = (format: string) => {
    const day = new Date().toISOString().slice(0, 10);
    const next = new Date(Date.now() + 24 * 3600_000).toISOString().slice(0, 10);
    return new URLSearchParams({ from: day, to: next, format });
  };
  async function text(chunks: AsyncIterable<string>) {
    let all = "";
    for await (const chunk of chunks) all += chunk;
    return all;
  }

  it("gives a supervisor every row of the range as CSV and as JSON Lines, each with its row hash, and records the export", async () => {
    const world = await createWorld();
    await someDecisions(world);
    const rows = await db.decisionLog.findMany({
      where: { tenantId: world.tenantId },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    const jsonl = await exportDecisionLog(person(world, "supervisor"), world.tenantId, range("jsonl"));
    if (!jsonl.ok) throw new Error(jsonl.message);
    expect(jsonl.contentType).toMatch(/^application\/x-ndjson/);
    const records = (await text(jsonl.chunks))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records.map((record) => record.id)).toEqual(rows.map((row) => String(row.id)));
    expect(records[0]).toMatchObject({
      tool: rows[0].toolName,
      code: rows[0].code,
      kind: rows[0].kind,
      row_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const sealed = await sealAll(world.tenantId);
    const seals = await db.decisionSeal.findMany({ where: { tenantId: world.tenantId, log: "decision" } });
    expect(sealed.problem).toBeNull();
    expect(new Set(seals.flatMap((seal) => seal.rowHashes))).toEqual(new Set(records.map((record) => record.row_hash)));

    const csv = await exportDecisionLog(person(world, "admin"), world.tenantId, range("csv"));
    if (!csv.ok) throw new Error(csv.message);
    const lines = (await text(csv.chunks)).trimEnd().split("\r\n");
    expect(lines[0]).toBe(
      "id,created_at,conversation_id,tool_call_id,tool,order_id,kind,stage,code,actor_id,replayed,latency_ms,detail,txid,row_hash",
    );
    expect(lines).toHaveLength(rows.length + 1);
    expect(csv.filename).toMatch(
      new RegExp(`^decision-log-${world.tenantId}-\\d{4}-\\d{2}-\\d{2}-\\d{4}-\\d{2}-\\d{2}\\.csv$`),
    );
    expect(
      (await db.auditLog.findMany({ where: { tenantId: world.tenantId, action: "decision-log.exported" } }))
        .map((row) => row.actorId)
        .sort(),
    ).toEqual([world.users.admin, world.users.supervisor].sort());
  });

  it("refuses an agent, answers another tenant's supervisor as if the tenant did not exist, and names a bad query", async () => {
    const world = await createWorld();
    await someDecisions(world);
    expect(await exportDecisionLog(person(world, "agent"), world.tenantId, range("csv"))).toMatchObject({
      ok: false,
      status: 403,
      code: "auth.forbidden",
    });
    expect(await exportDecisionLog(person(world, "otherSupervisor"), world.tenantId, range("csv"))).toMatchObject({
      ok: false,
      status: 404,
      code: "not-found",
    });
    expect(
      await exportDecisionLog(
        person(world, "supervisor"),
        world.tenantId,
        new URLSearchParams({ from: "2026-13-01", to: "2026-12-01", format: "xml" }),
      ),
    ).toMatchObject({
      ok: false,
      status: 400,
      code: "request.invalid",
      message: expect.stringContaining("invalid query: from, format"),
    });
    // Year 0 is a date zod takes but PostgreSQL does not: refused here, not a 200 whose body breaks off.
    for (const from of ["0000-01-01", "0001-01-01T00:00:00+01:00"])
      expect(
        await exportDecisionLog(
          person(world, "supervisor"),
          world.tenantId,
          new URLSearchParams({ from, to: "0001-06-01", format: "csv" }),
        ),
      ).toMatchObject({ ok: false, status: 400, code: "request.invalid", message: expect.stringContaining("from") });
    expect(
      await db.auditLog.count({
        where: { tenantId: { in: [world.tenantId, world.otherTenantId] }, action: "decision-log.exported" },
      }),
    ).toBe(0);
  });
});
