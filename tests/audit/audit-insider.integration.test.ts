import { spawnSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { updatePolicy } from "@/lib/admin/policy/numbers";
import { canonicalJson, sha256Hex } from "@/lib/canonical";
import { rowHash, verifyTenant } from "@/lib/audit/seal";
import { closeDb, db } from "@/lib/db";
import { migrate } from "@/lib/db/migrate";
import { propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { sealAll } from "../support/seal";
import { noProof } from "../support/step-up";
import { createWorld, type World } from "../support/world";

// The insider with the database, against a deployment laid out as docs/DEPLOY.md says: the tables belong to an
// owner role that only migrations use; the app (every call below, through the real functions) connects as a role
// that owns nothing; a superuser can do anything. The insider attacks with plain SQL on their own connection, the
// way psql would, and the operator runs `npm run audit:verify` against the head file the app kept.

const suffix = randomBytes(4).toString("hex");
const owner = `tg_owner_${suffix}`;
const app = `tg_app_${suffix}`;
const database = `tg_insider_${suffix}`;
const password = randomBytes(12).toString("hex");
const folder = mkdtempSync(path.join(tmpdir(), "toolgate-heads-"));
const headFile = path.join(folder, "audit-heads.jsonl");

function urlFor(role: string | null): string {
  const url = new URL(inject("databaseUrl"));
  url.pathname = `/${database}`;
  if (role) {
    url.username = role;
    url.password = password;
  }
  return url.toString();
}

/** A connection of the insider's own, as psql would open it. */
async function connect(role: string | null): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: urlFor(role) });
  await client.connect();
  return client;
}

let superuser: pg.Client;
let appRole: pg.Client;
let ownerRole: pg.Client;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: inject("databaseUrl") });
  await admin.connect();
  await admin.query(`CREATE ROLE ${owner} LOGIN PASSWORD '${password}'`);
  await admin.query(`CREATE ROLE ${app} LOGIN PASSWORD '${password}'`);
  await admin.query(`CREATE DATABASE ${database} OWNER ${owner}`);
  await admin.end();
  await migrate(urlFor(owner), { appRole: app });
  process.env.DATABASE_URL = urlFor(app);
  process.env.AUDIT_HEAD_FILE = headFile;
  [superuser, appRole, ownerRole] = await Promise.all([connect(null), connect(app), connect(owner)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([superuser, appRole, ownerRole].map((client) => client?.end()));
  await closeDb();
  rmSync(folder, { recursive: true, force: true });
});

/** A tenant with decisions (an executed refund among them) and an admin's tightening of the policy, all sealed. */
async function sealedWorld(): Promise<World> {
  const world = await createWorld();
  const conversation = await agentConversation(world);
  await proposeAsAgent(world, conversation, refund(world.orders.o1001, 1000));
  await propose(world.keys.agent, conversation, { name: "get_order", arguments: { order_id: world.orders.o1002 } });
  const admin = { id: world.users.admin, tenantId: world.tenantId };
  const policy = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
  await updatePolicy(
    admin,
    {
      autoLimitCents: 1_000,
      sessionCapCents: policy.sessionCapCents,
      maxAutoWrites: policy.maxAutoWrites,
      approvalTtlSeconds: policy.approvalTtlSeconds,
      agentDailyCeilingCents: policy.agentDailyCeilingCents,
      tenantDailyCeilingCents: policy.tenantDailyCeilingCents,
      rateOpenPerMin: policy.rateOpenPerMin,
      stepUpAboveCents: policy.stepUpAboveCents,
      twoPersonAboveCents: policy.twoPersonAboveCents,
      expiryWarningSeconds: policy.expiryWarningSeconds,
      duplicateWindowHours: policy.duplicateWindowHours,
      oauthRefreshIdleDays: policy.oauthRefreshIdleDays,
      oauthRefreshMaxDays: policy.oauthRefreshMaxDays,
      secondAdminAboveCents: policy.secondAdminAboveCents,
      changeDelaySeconds: policy.changeDelaySeconds,
    },
    // Lowering a limit tightens control: it needs no proof.
    { holder: await noProof(admin.id), item: "" },
  );
  await sealAll(world.tenantId, { audit: true });
  return world;
}

/** The superuser's way around the triggers, for one transaction. */
async function withTriggersOff(statements: string[], values: unknown[][] = []) {
  await superuser.query("BEGIN");
  await superuser.query("SET LOCAL session_replication_role = replica");
  for (const [index, statement] of statements.entries()) await superuser.query(statement, values[index] ?? []);
  await superuser.query("COMMIT");
}

/** `npm run audit:verify` as the operator runs it: the app's database URL, the seal key, the kept head file. */
function auditVerify(...args: string[]) {
  const { AUDIT_HEAD_FILE: _published, ...env } = process.env;
  const run = spawnSync(
    process.execPath,
    [
      path.join("node_modules", "tsx", "dist", "cli.mjs"),
      "--conditions=react-server",
      "scripts/audit-verify.ts",
      ...args,
    ],
    { encoding: "utf8", env },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** As the insider: deletes the tenant's last published decision seal and its rows; returns the seal's number. */
async function deleteLastDecisionSeal(world: World, keptHeads: string): Promise<number> {
  const heads = keptHeads
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { log: string; tenantId: string; seq: number });
  const last = heads.filter((head) => head.log === "decision" && head.tenantId === world.tenantId).at(-1)!;
  expect(last.seq).toBeGreaterThanOrEqual(2);
  const [seal] = (
    await superuser.query<{ id: string; rowIds: string[] }>(
      `SELECT "id"::text AS "id", "rowIds"::text[] AS "rowIds" FROM "DecisionSeal" WHERE "log" = 'decision' AND "tenantId" = $1 AND "seq" = $2`,
      [world.tenantId, last.seq],
    )
  ).rows;
  await withTriggersOff(
    [`DELETE FROM "DecisionLog" WHERE "id" = ANY($1::bigint[])`, `DELETE FROM "DecisionSeal" WHERE "id" = $1`],
    [[seal.rowIds], [seal.id]],
  );
  return last.seq;
}

async function denied(client: pg.Client, statement: string): Promise<string> {
  const error = await client.query(statement).then(
    () => null,
    (failure: Error) => failure,
  );
  expect(error, statement).not.toBeNull();
  return error!.message;
}

describe("an insider with the database", () => {
  it("as the app's role, cannot UPDATE, DELETE or TRUNCATE the logs or their seals, nor turn the triggers off", async () => {
    const world = await sealedWorld();
    for (const table of ["DecisionLog", "AuditLog", "DecisionSeal"]) {
      expect(await denied(appRole, `UPDATE "${table}" SET "tenantId" = "tenantId"`)).toMatch(/permission denied/);
      expect(await denied(appRole, `DELETE FROM "${table}"`)).toMatch(/permission denied/);
      expect(await denied(appRole, `TRUNCATE "${table}"`)).toMatch(/permission denied/);
      expect(await denied(appRole, `ALTER TABLE "${table}" DISABLE TRIGGER ALL`)).toMatch(/must be owner/);
    }
    expect(await denied(appRole, "SET session_replication_role = replica")).toMatch(/permission denied/);
    expect(await denied(appRole, `DELETE FROM "_prisma_migrations"`)).toMatch(/permission denied/);
    // Everything above ran the app's real work as this role: the grants are enough for it.
    expect(await verifyTenant(world.tenantId)).toMatchObject({ problem: null, rowsNotYetSealed: 0 });
    expect(await verifyTenant(world.tenantId, { log: "audit" })).toMatchObject({ problem: null, seals: 1 });
  });

  it("as the tables' owner, is refused UPDATE, DELETE and TRUNCATE of the logs by trigger while the triggers are on", async () => {
    await sealedWorld();
    for (const table of ["DecisionLog", "AuditLog", "DecisionSeal"]) {
      expect(await denied(ownerRole, `UPDATE "${table}" SET "tenantId" = "tenantId"`)).toMatch(/append-only/);
      expect(await denied(ownerRole, `DELETE FROM "${table}"`)).toMatch(/append-only/);
      expect(await denied(ownerRole, `TRUNCATE "${table}"`)).toMatch(/append-only/);
    }
  });

  it("as a superuser with the triggers off, rewrites the amount an admin set: audit:verify names the row", async () => {
    const world = await sealedWorld();
    const [change] = (
      await superuser.query<{ id: string; detail: { after: { autoLimitCents: number } } }>(
        `SELECT "id"::text AS "id", "detail" FROM "AuditLog" WHERE "tenantId" = $1 AND "action" = 'policy.updated'`,
        [world.tenantId],
      )
    ).rows;
    expect(change.detail.after.autoLimitCents).toBe(1_000);
    await withTriggersOff(
      [`UPDATE "AuditLog" SET "detail" = jsonb_set("detail", '{after,autoLimitCents}', '6000') WHERE "id" = $1`],
      [[change.id]],
    );
    const run = auditVerify("--head", headFile, world.tenantId);
    expect(run.status).toBe(1);
    expect(run.output).toMatch(
      new RegExp(
        `audit log ${world.tenantId}: FAILED at seal \\d+: altered row ${change.id}: row ${change.id} was altered`,
      ),
    );
    expect(run.output).toMatch(new RegExp(`decision log ${world.tenantId}: ok, `));
  });

  it("re-computing the chain with SQL and the code but without the key fails verification", async () => {
    const world = await sealedWorld();
    const [executed] = (
      await superuser.query<{ id: string }>(
        `SELECT "id"::text AS "id" FROM "DecisionLog" WHERE "tenantId" = $1 AND "code" = 'refund.issued'`,
        [world.tenantId],
      )
    ).rows;
    // The insider turns the refund into a read, then rebuilds every row hash and seal after it from the public
    // formula, once with an HMAC under a key they do not have (the empty one) and once as an unkeyed seal.
    for (const variant of ["hmac-without-the-key", "unkeyed"] as const) {
      await withTriggersOff(
        [`UPDATE "DecisionLog" SET "code" = 'order.read', "toolName" = 'get_order' WHERE "id" = $1`],
        [[executed.id]],
      );
      const seals = await superuser.query<Record<string, unknown>>(
        `SELECT "id", "log", "tenantId", "seq", "fromTxid"::text AS "fromTxid", "toTxid"::text AS "toTxid", "rowIds"::text[] AS "rowIds",
                "prevHash", "keyId", "position"::text AS "position", "createdAt" FROM "DecisionSeal"
         WHERE "log" = 'decision' AND "tenantId" = $1 ORDER BY "seq"`,
        [world.tenantId],
      );
      let prevHash = "0".repeat(64);
      for (const seal of seals.rows) {
        const { rows } = await superuser.query<Parameters<typeof rowHash>[0]>(
          `SELECT "id"::text AS "id", "tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "actorId",
                  "replayed", "latencyMs", "detail", "createdAt", "txid"::text AS "txid" FROM "DecisionLog" WHERE "id" = ANY($1::bigint[]) ORDER BY "id"`,
          [seal.rowIds],
        );
        const link = {
          log: seal.log,
          tenantId: seal.tenantId,
          seq: seal.seq,
          fromTxid: seal.fromTxid,
          toTxid: seal.toTxid,
          rowIds: seal.rowIds,
          rowHashes: rows.map(rowHash),
          prevHash,
          keyId: variant === "unkeyed" ? null : seal.keyId,
          position: variant === "unkeyed" ? null : seal.position,
          sealedAt: (seal.createdAt as Date).toISOString(),
        };
        const hash =
          variant === "unkeyed"
            ? sha256Hex(
                canonicalJson({
                  tenantId: link.tenantId,
                  seq: link.seq,
                  fromTxid: link.fromTxid,
                  toTxid: link.toTxid,
                  rowIds: link.rowIds,
                  rowHashes: link.rowHashes,
                  prevHash,
                }),
              )
            : createHmac("sha256", "").update(canonicalJson(link)).digest("hex");
        await withTriggersOff(
          [
            `UPDATE "DecisionSeal" SET "rowHashes" = $2, "prevHash" = $3, "hash" = $4, "keyId" = $5, "position" = $6::bigint WHERE "id" = $1`,
          ],
          [[seal.id, link.rowHashes, prevHash, hash, link.keyId, link.position]],
        );
        prevHash = hash;
      }
      const result = await verifyTenant(world.tenantId);
      expect(result.problem).toMatchObject({
        kind: variant === "unkeyed" ? "unkeyed" : "seal-altered",
        seq: 1,
      });
      const run = auditVerify(world.tenantId);
      expect(run.status).toBe(1);
      expect(run.output).toMatch(
        new RegExp(
          `decision log ${world.tenantId}: FAILED at seal 1: ${variant === "unkeyed" ? "unkeyed" : "seal-altered"}: `,
        ),
      );
    }
    // Accepting seals from before keys does not help: the chain no longer reaches the head the app published.
    const lenient = auditVerify("--allow-unkeyed", "--head", headFile, world.tenantId);
    expect(lenient.status).toBe(1);
    expect(lenient.output).toMatch(new RegExp(`decision log ${world.tenantId}: FAILED at seal \\d+: head-differs: `));
  });

  it("deleting the last rows and their seals passes a check without the kept head and fails against it", async () => {
    const world = await sealedWorld();
    const conversation = await agentConversation(world, "ben");
    await proposeAsAgent(world, conversation, refund(world.orders.o1003, 1500));
    await sealAll(world.tenantId, { audit: true });
    const seq = await deleteLastDecisionSeal(world, readFileSync(headFile, "utf8"));
    // The chain that is left is consistent in itself: only the head kept outside the database shows the loss.
    expect((await verifyTenant(world.tenantId)).problem).toBeNull();
    const blind = auditVerify(world.tenantId);
    expect(blind.status).toBe(0);
    expect(blind.output).toMatch(/^WARNING: no kept heads given, so this check cannot see deleted rows: /m);
    expect(blind.output).toMatch(
      new RegExp(`decision log ${world.tenantId}: ok, .*, NO KEPT HEAD: rows deleted from its end would not show`),
    );
    expect(blind.output).toMatch(/^WARNING: 2 of 2 chains checked ok without a kept head, which proves nothing/m);
    const run = auditVerify("--head", headFile, world.tenantId);
    expect(run.status).toBe(1);
    expect(run.output).toMatch(
      new RegExp(
        `decision log ${world.tenantId}: FAILED at seal ${seq}: head-missing: the chain ends at seal ${seq - 1}, but seal ${seq} `,
      ),
    );
    expect(run.output).not.toMatch(/WARNING/);
    // Refunds after the deletion are sealed in the deleted seal's place: still not the head that was published.
    await proposeAsAgent(world, conversation, refund(world.orders.o1003, 500));
    await sealAll(world.tenantId, { audit: true });
    const again = auditVerify("--head", headFile, world.tenantId);
    expect(again.status).toBe(1);
    expect(again.output).toMatch(
      new RegExp(`publishes seal ${seq} of the decision log of ${world.tenantId} again with another hash`),
    );
    expect(again.output).toMatch(new RegExp(`decision log ${world.tenantId}: FAILED at seal ${seq}: head-differs: `));
  });

  it("heads kept in a folder, a new file each pass (an object store that cannot append), catch the same deletion", async () => {
    const heads = path.join(folder, "head-folder");
    mkdirSync(heads);
    process.env.AUDIT_HEAD_FILE = `${heads}/`;
    try {
      const world = await sealedWorld();
      const conversation = await agentConversation(world, "ben");
      await proposeAsAgent(world, conversation, refund(world.orders.o1003, 1500));
      await sealAll(world.tenantId, { audit: true });
      const files = readdirSync(heads);
      expect(files.length).toBeGreaterThanOrEqual(2);
      for (const file of files) expect(file).toMatch(/^heads-[0-9T-]+Z-[0-9a-f]{8}\.jsonl$/);
      const whole = auditVerify("--head", heads, world.tenantId);
      expect(whole.output).toMatch(new RegExp(`decision log ${world.tenantId}: ok, .*reaches the kept head`));
      expect(whole.status).toBe(0);

      const kept = files.map((file) => readFileSync(path.join(heads, file), "utf8")).join("");
      const seq = await deleteLastDecisionSeal(world, kept);
      const run = auditVerify("--head", heads, world.tenantId);
      expect(run.status).toBe(1);
      expect(run.output).toMatch(new RegExp(`decision log ${world.tenantId}: FAILED at seal ${seq}: head-missing: `));
      // The rebuilt seal is published in a file of its own: the folder is read as one record.
      await proposeAsAgent(world, conversation, refund(world.orders.o1003, 500));
      await sealAll(world.tenantId, { audit: true });
      const again = auditVerify("--head", heads, world.tenantId);
      expect(again.status).toBe(1);
      expect(again.output).toMatch(
        new RegExp(
          `heads-\\S+\\.jsonl line \\d+ publishes seal ${seq} of the decision log of ${world.tenantId} again with another hash \\(first at \\S+heads-\\S+\\.jsonl line \\d+\\)`,
        ),
      );
    } finally {
      process.env.AUDIT_HEAD_FILE = headFile;
    }
  });

  it("logs each head as an audit.head line too, except under next dev with a head file, whose console it would flood", async () => {
    const world = await sealedWorld();
    const conversation = await agentConversation(world, "ben");
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const heads = () =>
      logged.mock.calls
        .map(([line]) => String(line))
        .filter((line) => line.includes('"event":"audit.head"') && line.includes(world.tenantId));
    const node = process.env.NODE_ENV;
    try {
      await proposeAsAgent(world, conversation, refund(world.orders.o1003, 700));
      await sealAll(world.tenantId);
      expect(heads()).not.toEqual([]);
      const before = readFileSync(headFile, "utf8").length;
      logged.mockClear();
      vi.stubEnv("NODE_ENV", "development");
      await proposeAsAgent(world, conversation, refund(world.orders.o1003, 800));
      await sealAll(world.tenantId);
      expect(heads()).toEqual([]);
      expect(readFileSync(headFile, "utf8").slice(before)).toContain(world.tenantId);
    } finally {
      vi.unstubAllEnvs();
      logged.mockRestore();
      expect(process.env.NODE_ENV).toBe(node);
    }
  });

  it("an edited head file is refused", async () => {
    const world = await sealedWorld();
    const lines = readFileSync(headFile, "utf8").trim().split("\n");
    const mine = lines.filter((line) => JSON.parse(line).tenantId === world.tenantId);
    const forged = path.join(folder, "forged.jsonl");
    writeFileSync(
      forged,
      `${mine.map((line) => line.replace(/"hash":"[0-9a-f]{8}/, '"hash":"00000000')).join("\n")}\n`,
    );
    const run = auditVerify("--head", forged, world.tenantId);
    expect(run.status).toBe(1);
    expect(run.output).toMatch(/line 1 is not signed by key 1: the head file was edited/);
  });

  it("a row inserted with an old createdAt takes its insert's time and place; with the triggers off it is named backdated", async () => {
    const world = await sealedWorld();
    const [sealed] = (
      await appRole.query<{ fromTxid: string }>(
        `SELECT "fromTxid"::text AS "fromTxid" FROM "DecisionSeal" WHERE "log" = 'decision' AND "tenantId" = $1 AND "seq" = 1`,
        [world.tenantId],
      )
    ).rows;
    const insert = `INSERT INTO "DecisionLog" ("tenantId", "toolName", "kind", "stage", "code", "latencyMs", "createdAt", "txid")
      VALUES ($1, 'issue_refund', 'executed', 'execute', 'refund.issued', 1, '2026-01-02T03:04:05Z', $2) RETURNING "id"::text AS "id", "createdAt", "txid"::text AS "txid"`;
    const [asApp] = (
      await appRole.query<{ id: string; createdAt: Date; txid: string }>(insert, [world.tenantId, sealed.fromTxid])
    ).rows;
    expect(Date.now() - asApp.createdAt.getTime()).toBeLessThan(60_000);
    expect(asApp.txid).not.toBe(sealed.fromTxid);
    await sealAll(world.tenantId, { audit: true });
    const [last] = (
      await superuser.query<{ rowIds: string[]; position: string }>(
        `SELECT "rowIds"::text[] AS "rowIds", "position"::text AS "position" FROM "DecisionSeal" WHERE "log" = 'decision' AND "tenantId" = $1 ORDER BY "seq" DESC LIMIT 1`,
        [world.tenantId],
      )
    ).rows;
    expect(last.rowIds.at(-1)).toBe(asApp.id);
    expect(last.position).toBe(String(await db.decisionLog.count({ where: { tenantId: world.tenantId } })));
    expect((await verifyTenant(world.tenantId)).problem).toBeNull();

    await superuser.query("BEGIN");
    await superuser.query("SET LOCAL session_replication_role = replica");
    const [bySuperuser] = (
      await superuser.query<{ id: string }>(
        `INSERT INTO "DecisionLog" ("tenantId", "toolName", "kind", "stage", "code", "latencyMs", "createdAt")
         VALUES ($1, 'issue_refund', 'executed', 'execute', 'refund.issued', 1, '2026-01-02T03:04:05Z') RETURNING "id"::text AS "id"`,
        [world.tenantId],
      )
    ).rows;
    await superuser.query("COMMIT");
    await sealAll(world.tenantId, { audit: true });
    const run = auditVerify("--head", headFile, world.tenantId);
    expect(run.status).toBe(1);
    expect(run.output).toMatch(
      new RegExp(
        `decision log ${world.tenantId}: FAILED at seal \\d+: backdated row ${bySuperuser.id}: row ${bySuperuser.id} says it was created at 2026-01-02T03:04:05.000Z`,
      ),
    );
  });

  it("a row inserted with the triggers off under a transaction id no transaction has had yet is named inserted, not left unsealed for ever", async () => {
    const world = await sealedWorld();
    await superuser.query("BEGIN");
    await superuser.query("SET LOCAL session_replication_role = replica");
    const [forged] = (
      await superuser.query<{ id: string }>(
        `INSERT INTO "DecisionLog" ("tenantId", "toolName", "kind", "stage", "code", "latencyMs", "createdAt", "txid")
         VALUES ($1, 'issue_refund', 'executed', 'execute', 'refund.issued', 1, '2026-01-02T03:04:05Z', 9000000000000000000) RETURNING "id"::text AS "id"`,
        [world.tenantId],
      )
    ).rows;
    await superuser.query("COMMIT");
    expect((await verifyTenant(world.tenantId)).problem).toMatchObject({ kind: "inserted", rowId: forged.id });
    const run = auditVerify("--head", headFile, world.tenantId);
    expect(run.status).toBe(1);
    expect(run.output).toContain(`inserted row ${forged.id}`);
  });
});

describe("a database sealed before seals were keyed", () => {
  it("verifies its unkeyed seals only at the start of a chain and only when asked, and keyed seals continue the chain", async () => {
    // Its own head file: the one above holds the heads the attacks made conflict on purpose.
    const upgradeHeads = path.join(folder, "upgrade-heads.jsonl");
    process.env.AUDIT_HEAD_FILE = upgradeHeads;
    const world = await createWorld();
    const conversation = await agentConversation(world);
    await proposeAsAgent(world, conversation, refund(world.orders.o1001, 1000));
    // The seal the version before keys made: a plain SHA-256 over the link, no key id, no position.
    const { rows } = await superuser.query<Parameters<typeof rowHash>[0]>(
      `SELECT "id"::text AS "id", "tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "actorId",
              "replayed", "latencyMs", "detail", "createdAt", "txid"::text AS "txid" FROM "DecisionLog" WHERE "tenantId" = $1 ORDER BY "id"`,
      [world.tenantId],
    );
    const old = {
      tenantId: world.tenantId,
      seq: 1,
      fromTxid: "0",
      toTxid: String(Math.max(...rows.map((row) => Number(row.txid))) + 1),
      rowIds: rows.map((row) => row.id),
      rowHashes: rows.map(rowHash),
      prevHash: "0".repeat(64),
    };
    await superuser.query(
      `INSERT INTO "DecisionSeal" ("tenantId", "seq", "fromTxid", "toTxid", "rowIds", "rowHashes", "prevHash", "hash")
       VALUES ($1, 1, 0, $2::bigint, $3::bigint[], $4, $5, $6)`,
      [old.tenantId, old.toTxid, old.rowIds, old.rowHashes, old.prevHash, sha256Hex(canonicalJson(old))],
    );
    await proposeAsAgent(world, conversation, refund(world.orders.o1002, 1000));
    await sealAll(world.tenantId, { audit: true, allowUnkeyed: true });
    const total = await db.decisionLog.count({ where: { tenantId: world.tenantId } });
    const [keyed] = (
      await superuser.query<{ keyId: string; position: string }>(
        `SELECT "keyId", "position"::text AS "position" FROM "DecisionSeal" WHERE "log" = 'decision' AND "tenantId" = $1 AND "seq" = 2`,
        [world.tenantId],
      )
    ).rows;
    expect(keyed).toEqual({ keyId: "1", position: String(total) });

    expect((await verifyTenant(world.tenantId)).problem).toMatchObject({ kind: "unkeyed", seq: 1 });
    expect(await verifyTenant(world.tenantId, { allowUnkeyed: true })).toMatchObject({
      problem: null,
      seals: 2,
      unkeyedSeals: 1,
      rowsSealed: total,
    });
    const run = auditVerify("--allow-unkeyed", "--head", upgradeHeads, world.tenantId);
    expect(run.output).toMatch(
      new RegExp(
        `decision log ${world.tenantId}: ok, 2 seals \\(1 from before keys\\), ${total} rows sealed, 0 not sealed yet`,
      ),
    );
    expect(run.status).toBe(0);
  });
});
