import type { Db, Tx } from "../../db";
import { Prisma } from "../../generated/prisma/client";

export interface AdminChangeRow {
  id: string;
  tenantId: string;
  kind: string;
  change: Record<string, unknown>;
  base: Record<string, unknown>;
  digest: string;
  proposedById: string;
  mode: "second-admin" | "delay";
  status: string;
  applyAt: Date | null;
  expiresAt: Date;
}

const CHANGE_COLUMNS = Prisma.sql`"id", "tenantId", "kind", "change", "base", "digest", "proposedById", "mode", "status", "applyAt", "expiresAt"`;

/** The tenant's active supervisors and admins: who hears of a waiting change, and how many admins there are. */
export async function findOverseers(
  db: Db,
  tenantId: string,
): Promise<{ id: string; email: string; role: "SUPERVISOR" | "ADMIN" }[]> {
  return db.$queryRaw`
    SELECT "id", "email", "role"::text AS "role" FROM "User"
    WHERE "tenantId" = ${tenantId} AND "active" AND "role" IN ('SUPERVISOR', 'ADMIN')
    ORDER BY "id"`;
}

export async function insertAdminChange(
  db: Db,
  row: Omit<AdminChangeRow, "status"> & { createdAt: Date },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "AdminChange" ("id", "tenantId", "kind", "change", "base", "digest", "proposedById", "mode", "status",
      "applyAt", "expiresAt", "createdAt")
    VALUES (${row.id}, ${row.tenantId}, ${row.kind}, ${JSON.stringify(row.change)}::jsonb,
      ${JSON.stringify(row.base)}::jsonb, ${row.digest}, ${row.proposedById}, ${row.mode}, 'pending',
      ${row.applyAt}::timestamptz, ${row.expiresAt}, ${row.createdAt})`;
}

/** Locks the tenant's change with this id; null for a missing or foreign id. */
export async function lockAdminChange(tx: Tx, tenantId: string, id: string): Promise<AdminChangeRow | null> {
  const [row] = await tx.$queryRaw<AdminChangeRow[]>`
    SELECT ${CHANGE_COLUMNS} FROM "AdminChange" WHERE "id" = ${id} AND "tenantId" = ${tenantId} FOR UPDATE`;
  return row ?? null;
}

/** Locks delayed changes whose delay has passed (skipping rows another instance holds, and those named). */
export async function lockDueDelayedChanges(tx: Tx, limit: number, skipping: string[]): Promise<AdminChangeRow[]> {
  return tx.$queryRaw<AdminChangeRow[]>`
    SELECT ${CHANGE_COLUMNS} FROM "AdminChange"
    WHERE "status" = 'pending' AND "mode" = 'delay' AND "applyAt" <= now() AND NOT ("id" = ANY(${skipping}::text[]))
    ORDER BY "applyAt" LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
}

/**
 * Deletes the review replays kept for changes that stopped waiting: nobody reviews them again. A statement of its own
 * after the change's row moved, so it also sees a replay stored while that row was locked (storeReviewReplay).
 */
async function deleteReviewReplays(tx: Tx, changeIds: string[]): Promise<void> {
  await tx.$executeRaw`DELETE FROM "RuleChangeReplay" WHERE "changeId" = ANY(${changeIds}::text[])`;
}

/**
 * Ends a pending change (single use: only a row still pending moves), and its kept review replay with it; returns
 * how many rows moved (0 or 1).
 */
export async function closeAdminChange(
  tx: Tx,
  id: string,
  status: "applied" | "cancelled" | "expired" | "superseded",
  decidedById: string | null,
): Promise<number> {
  const moved = await tx.$executeRaw`
    UPDATE "AdminChange" SET "status" = ${status}, "decidedById" = ${decidedById}, "decidedAt" = now()
    WHERE "id" = ${id} AND "status" = 'pending'`;
  await deleteReviewReplays(tx, [id]);
  return moved;
}

/** Expires changes waiting for a second admin past their expiry, and their kept review replays; returns them. */
export async function expireAdminChanges(
  tx: Tx,
): Promise<{ id: string; tenantId: string; proposedById: string; kind: string }[]> {
  const expired = await tx.$queryRaw<{ id: string; tenantId: string; proposedById: string; kind: string }[]>`
    UPDATE "AdminChange" SET "status" = 'expired', "decidedAt" = now()
    WHERE "status" = 'pending' AND "mode" = 'second-admin' AND "expiresAt" <= now()
    RETURNING "id", "tenantId", "proposedById", "kind"`;
  await deleteReviewReplays(
    tx,
    expired.map((row) => row.id),
  );
  return expired;
}

export interface PendingChangeEntry extends AdminChangeRow {
  proposer: string;
  createdAt: Date;
}

/** The tenant's changes still waiting, oldest first, each naming who proposed it. */
export async function findPendingChanges(db: Db, tenantId: string): Promise<PendingChangeEntry[]> {
  return db.$queryRaw<PendingChangeEntry[]>`
    SELECT c."id", c."tenantId", c."kind", c."change", c."base", c."digest", c."proposedById", c."mode", c."status",
      c."applyAt", c."expiresAt", c."createdAt", u."name" || ' (' || u."email" || ')' AS "proposer"
    FROM "AdminChange" c JOIN "User" u ON u."id" = c."proposedById"
    WHERE c."tenantId" = ${tenantId} AND c."status" = 'pending'
    ORDER BY c."createdAt", c."id"`;
}
