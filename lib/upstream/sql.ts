import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import type { Outcome } from "../outcome";
import type { PinnedDefinition, ToolStatus, Verdict } from "./servers/definition";

// Every statement of the upstream feature: its servers, their tools' pinned definitions and the calls forwarded.

export interface ServerRow {
  id: string;
  tenantId: string;
  name: string;
  transport: string;
  url: string | null;
  headerName: string | null;
  secret: string | null;
}

/** Adds the server, or changes the one of that name (a local server defined again by the operator's file). */
export async function upsertServer(db: Db, server: ServerRow): Promise<ServerRow> {
  const [row] = await db.$queryRaw<ServerRow[]>`
    INSERT INTO "UpstreamServer" AS s ("id", "tenantId", "name", "transport", "url", "headerName", "secret")
    VALUES (${server.id}, ${server.tenantId}, ${server.name}, ${server.transport}, ${server.url}, ${server.headerName}, ${server.secret})
    ON CONFLICT ("tenantId", "name") DO UPDATE SET "transport" = EXCLUDED."transport", "url" = EXCLUDED."url",
      "headerName" = EXCLUDED."headerName", "secret" = EXCLUDED."secret"
    RETURNING s."id", s."tenantId", s."name", s."transport", s."url", s."headerName", s."secret"`;
  return row;
}

export async function findServer(db: Db, tenantId: string, name: string): Promise<ServerRow | null> {
  const [row] = await db.$queryRaw<ServerRow[]>`
    SELECT s."id", s."tenantId", s."name", s."transport", s."url", s."headerName", s."secret"
    FROM "UpstreamServer" s WHERE s."tenantId" = ${tenantId} AND s."name" = ${name}`;
  return row ?? null;
}

export async function findServerById(db: Db, id: string): Promise<ServerRow | null> {
  const [row] = await db.$queryRaw<ServerRow[]>`
    SELECT s."id", s."tenantId", s."name", s."transport", s."url", s."headerName", s."secret"
    FROM "UpstreamServer" s WHERE s."id" = ${id}`;
  return row ?? null;
}

/** Every tenant's servers, for the background sync. */
export async function findAllServers(db: Db): Promise<ServerRow[]> {
  return db.$queryRaw<ServerRow[]>`
    SELECT s."id", s."tenantId", s."name", s."transport", s."url", s."headerName", s."secret"
    FROM "UpstreamServer" s ORDER BY s."tenantId", s."name" LIMIT 1000`;
}

export async function markServerSynced(db: Db, id: string): Promise<void> {
  await db.$executeRaw`UPDATE "UpstreamServer" SET "syncedAt" = now(), "listingRefused" = NULL WHERE "id" = ${id}`;
}

/** Why the server's listing was not taken, for the admin page; its tools stay as they were. */
export async function markListingRefused(db: Db, id: string, reason: string): Promise<void> {
  await db.$executeRaw`UPDATE "UpstreamServer" SET "listingRefused" = ${reason} WHERE "id" = ${id}`;
}

export interface ToolRow {
  id: string;
  tenantId: string;
  serverId: string;
  name: string;
  definition: PinnedDefinition;
  definitionHash: string;
  status: ToolStatus;
  reviewedDefinition: PinnedDefinition | null;
  reviewedHash: string | null;
  verdict: Verdict;
}

export async function findServerTools(db: Db, serverId: string): Promise<ToolRow[]> {
  return db.$queryRaw<ToolRow[]>`
    SELECT t."id", t."tenantId", t."serverId", t."name", t."definition", t."definitionHash", t."status",
           t."reviewedDefinition", t."reviewedHash", t."verdict"
    FROM "UpstreamTool" t WHERE t."serverId" = ${serverId} ORDER BY t."name"`;
}

/** One of the tenant's tools by its id, when it still has the definition hashed as `hash`. */
export async function findToolAsSeen(db: Db, tenantId: string, id: string, hash: string): Promise<ToolRow | null> {
  const rows = await db.$queryRaw<ToolRow[]>`
    SELECT t."id", t."tenantId", t."serverId", t."name", t."definition", t."definitionHash", t."status",
           t."reviewedDefinition", t."reviewedHash", t."verdict"
    FROM "UpstreamTool" t WHERE t."id" = ${id} AND t."tenantId" = ${tenantId} AND t."definitionHash" = ${hash}`;
  return rows[0] ?? null;
}

export async function insertTool(
  db: Db,
  tool: Pick<ToolRow, "id" | "tenantId" | "serverId" | "name" | "definition" | "definitionHash" | "verdict">,
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "UpstreamTool" ("id", "tenantId", "serverId", "name", "definition", "definitionHash", "status", "verdict")
    VALUES (${tool.id}, ${tool.tenantId}, ${tool.serverId}, ${tool.name}, ${JSON.stringify(tool.definition)}::jsonb,
            ${tool.definitionHash}, 'pending-review', ${tool.verdict})`;
}

/** A definition the server now lists differently: kept as the tool's current one, in `status`, until reviewed. */
export async function changeToolDefinition(
  db: Db,
  id: string,
  change: { definition: PinnedDefinition; hash: string; status: ToolStatus },
): Promise<void> {
  await db.$executeRaw`
    UPDATE "UpstreamTool" SET "definition" = ${JSON.stringify(change.definition)}::jsonb, "definitionHash" = ${change.hash},
           "status" = ${change.status}, "updatedAt" = now()
    WHERE "id" = ${id}`;
}

/**
 * An admin's review: the definition they saw (by hash) becomes the reviewed one, with their verdict. False when the
 * tool is not the tenant's or its definition changed since the page showed it.
 */
export async function markReviewed(
  db: Db,
  review: { tenantId: string; toolId: string; seenHash: string; verdict: Verdict; reviewerId: string },
): Promise<boolean> {
  const changed = await db.$executeRaw`
    UPDATE "UpstreamTool" SET "status" = 'reviewed', "reviewedDefinition" = "definition", "reviewedHash" = "definitionHash",
           "verdict" = ${review.verdict}, "reviewedById" = ${review.reviewerId}, "reviewedAt" = now(), "updatedAt" = now()
    WHERE "id" = ${review.toolId} AND "tenantId" = ${review.tenantId} AND "definitionHash" = ${review.seenHash}`;
  return changed === 1;
}

export type ToolWithServer = ToolRow & { server: ServerRow };

/** The tenant's tools with their servers: all of them, or only those named `<server>__<tool>` in `names`. */
export async function findTenantTools(
  db: Db,
  tenantId: string,
  names: string[] | null = null,
): Promise<ToolWithServer[]> {
  const rows = await db.$queryRaw<(ToolRow & { server: ServerRow })[]>`
    SELECT t."id", t."tenantId", t."serverId", t."name", t."definition", t."definitionHash", t."status",
           t."reviewedDefinition", t."reviewedHash", t."verdict", to_jsonb(s) AS "server"
    FROM "UpstreamTool" t JOIN "UpstreamServer" s ON s."id" = t."serverId"
    WHERE t."tenantId" = ${tenantId} AND (${names}::text[] IS NULL OR s."name" || '__' || t."name" = ANY(${names}::text[]))
    ORDER BY s."name", t."name"`;
  return rows;
}

/** One of the tenant's tools by its server's name and its own, with the server. */
export async function findTool(
  db: Db,
  tenantId: string,
  serverName: string,
  toolName: string,
): Promise<ToolWithServer | null> {
  const [row] = await db.$queryRaw<ToolWithServer[]>`
    SELECT t."id", t."tenantId", t."serverId", t."name", t."definition", t."definitionHash", t."status",
           t."reviewedDefinition", t."reviewedHash", t."verdict",
           jsonb_build_object('id', s."id", 'tenantId', s."tenantId", 'name', s."name", 'transport', s."transport",
                              'url', s."url", 'headerName', s."headerName", 'secret', s."secret") AS "server"
    FROM "UpstreamTool" t JOIN "UpstreamServer" s ON s."id" = t."serverId"
    WHERE t."tenantId" = ${tenantId} AND s."tenantId" = ${tenantId} AND s."name" = ${serverName} AND t."name" = ${toolName}`;
  return row ?? null;
}

/** The call a conversation already made to this tool under this call key, for its replay. */
export async function findKeyedCall(
  db: Db,
  key: { conversationId: string; toolName: string; callKey: string },
): Promise<{ id: string; argsHash: string | null; outcome: Outcome } | null> {
  const [row] = await db.$queryRaw<{ id: string; argsHash: string | null; outcome: Outcome }[]>`
    SELECT "id", "argsHash", "outcome" FROM "ToolCall"
    WHERE "conversationId" = ${key.conversationId} AND "toolName" = ${key.toolName} AND "callKey" = ${key.callKey}`;
  return row ?? null;
}

export type CallStatus = "held" | "sending" | "answered" | "unknown" | "not-sent" | "resolved";

export interface UpstreamCallRow {
  toolCallId: string;
  tenantId: string;
  serverId: string;
  toolName: string;
  definitionHash: string;
  idempotencyKey: string;
  status: CallStatus;
}

export async function insertUpstreamCall(db: Db, call: UpstreamCallRow): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "UpstreamCall" ("toolCallId", "tenantId", "serverId", "toolName", "definitionHash", "idempotencyKey", "status", "sentAt")
    VALUES (${call.toolCallId}, ${call.tenantId}, ${call.serverId}, ${call.toolName}, ${call.definitionHash}, ${call.idempotencyKey},
            ${call.status}, CASE WHEN ${call.status} = 'sending' THEN now() END)`;
}

/** A forwarded call with what its own row holds: the arguments, the conversation and the approval it waited on. */
export interface ForwardedCall extends UpstreamCallRow {
  argsCanonical: string | null;
  argsHash: string | null;
  conversationId: string;
  approvalId: string | null;
}

export async function findUpstreamCall(db: Db, toolCallId: string): Promise<ForwardedCall | null> {
  const [row] = await db.$queryRaw<ForwardedCall[]>`
    SELECT u."toolCallId", u."tenantId", u."serverId", u."toolName", u."definitionHash", u."idempotencyKey", u."status",
           c."argsCanonical", c."argsHash", c."conversationId", c."approvalId"
    FROM "UpstreamCall" u JOIN "ToolCall" c ON c."id" = u."toolCallId" WHERE u."toolCallId" = ${toolCallId}`;
  return row ?? null;
}

/** Moves the call from one status to the next; false when it was no longer in `from` (someone else moved it). */
export async function moveUpstreamCall(db: Db, toolCallId: string, from: CallStatus, to: CallStatus): Promise<boolean> {
  const changed = await db.$executeRaw`
    UPDATE "UpstreamCall" SET "status" = ${to}, "sentAt" = CASE WHEN ${to} = 'sending' THEN now() ELSE "sentAt" END
    WHERE "toolCallId" = ${toolCallId} AND "status" = ${from}`;
  return changed === 1;
}

/**
 * A call whose answer was lost: `unknown`, or still `sending` though sent before `lostBefore` (the process that sent
 * it died, or could not record the answer).
 */
const lost = (lostBefore: Date) =>
  Prisma.sql`("status" = 'unknown' OR ("status" = 'sending' AND "sentAt" < ${lostBefore}))`;

/** The tenant's calls whose answer was lost, for a person to resolve, oldest first. */
export async function findLostCalls(
  db: Db,
  tenantId: string,
  lostBefore: Date,
): Promise<{ toolCallId: string; toolName: string; sentAt: Date | null; idempotencyKey: string }[]> {
  return db.$queryRaw`
    SELECT "toolCallId", "toolName", "sentAt", "idempotencyKey" FROM "UpstreamCall"
    WHERE "tenantId" = ${tenantId} AND ${lost(lostBefore)} ORDER BY "createdAt" LIMIT 100`;
}

/** A person's word on a lost call of their tenant; false when it is not (or no longer) lost. */
export async function resolveLostCall(
  db: Db,
  call: { toolCallId: string; tenantId: string; resolvedById: string; lostBefore: Date },
): Promise<boolean> {
  const changed = await db.$executeRaw`
    UPDATE "UpstreamCall" SET "status" = 'resolved', "resolvedById" = ${call.resolvedById}, "resolvedAt" = now()
    WHERE "toolCallId" = ${call.toolCallId} AND "tenantId" = ${call.tenantId} AND ${lost(call.lostBefore)}`;
  return changed === 1;
}

/** The tenant's servers as the admin page lists them: never the secret, only whether there is one. */
export async function findServers(
  db: Db,
  tenantId: string,
): Promise<
  {
    id: string;
    name: string;
    transport: string;
    url: string | null;
    hasSecret: boolean;
    syncedAt: Date | null;
    listingRefused: string | null;
  }[]
> {
  return db.$queryRaw`
    SELECT "id", "name", "transport", "url", "secret" IS NOT NULL AS "hasSecret", "syncedAt", "listingRefused"
    FROM "UpstreamServer" WHERE "tenantId" = ${tenantId} ORDER BY "name"`;
}

/**
 * For `recordLaterOutcomeWith`: the call `toolCallId` moved from `sending` to `status` (with its answer's digest),
 * only while it is still `sending` (a supervisor who resolved it meanwhile has the last word); `final` is `recorded`.
 */
export function settleSending(
  toolCallId: string,
  status: "answered" | "not-sent",
  resultDigest: string | null,
  recorded: Outcome,
): Prisma.Sql {
  return Prisma.sql`moved AS (
      UPDATE "UpstreamCall" SET "status" = ${status}, "resultDigest" = ${resultDigest}::text,
        "answeredAt" = CASE WHEN ${status} = 'answered' THEN now() END
      WHERE "toolCallId" = ${toolCallId} AND "status" = 'sending'
      RETURNING 1
    ), final AS (
      SELECT ${JSON.stringify(recorded)}::jsonb AS "outcome" FROM moved
    )`;
}
