import type { Db } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import { countCall } from "../../db/sql";

export interface ClientRow {
  id: string;
  kind: "cimd" | "dcr";
  name: string;
  redirectUris: string[];
  clientUri: string | null;
  fetchedAt: Date | null;
  /** Until when a metadata document's copy is used without fetching it again (its cache headers, bounded). */
  cacheUntil: Date | null;
}

export async function findClient(db: Db, id: string): Promise<ClientRow | null> {
  const [row] = await db.$queryRaw<ClientRow[]>`
    SELECT "id", "kind", "name", "redirectUris", "clientUri", "fetchedAt", "cacheUntil" FROM "OAuthClient"
    WHERE "id" = ${id}`;
  return row ?? null;
}

/**
 * Stores a client's metadata document as fetched now (a newer fetch replaces the cached one, keys included); the
 * key set kept from its `jwks_uri` is dropped when the document names another.
 */
export async function upsertMetadataClient(
  db: Db,
  client: {
    id: string;
    name: string;
    redirectUris: string[];
    clientUri: string | null;
    authMethod: "none" | "private_key_jwt";
    jwksUri: string | null;
    cacheUntil: Date;
  },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "OAuthClient" ("id", "kind", "name", "redirectUris", "clientUri", "fetchedAt", "authMethod", "jwksUri",
                               "cacheUntil")
    VALUES (${client.id}, 'cimd', ${client.name}, ${client.redirectUris}, ${client.clientUri}, CURRENT_TIMESTAMP,
            ${client.authMethod}, ${client.jwksUri}, ${client.cacheUntil})
    ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name", "redirectUris" = EXCLUDED."redirectUris",
      "clientUri" = EXCLUDED."clientUri", "fetchedAt" = EXCLUDED."fetchedAt", "authMethod" = EXCLUDED."authMethod",
      "jwksUri" = EXCLUDED."jwksUri", "cacheUntil" = EXCLUDED."cacheUntil",
      "jwks" = CASE WHEN "OAuthClient"."jwksUri" = EXCLUDED."jwksUri" THEN "OAuthClient"."jwks" END,
      "jwksCacheUntil" = CASE WHEN "OAuthClient"."jwksUri" = EXCLUDED."jwksUri" THEN "OAuthClient"."jwksCacheUntil" END
    WHERE "OAuthClient"."kind" = 'cimd'`;
}

export async function insertRegisteredClient(
  db: Db,
  client: {
    id: string;
    name: string;
    redirectUris: string[];
    clientUri: string | null;
    registeredFrom: string;
    authMethod: "none" | "client_secret_post";
    secretHash: string | null;
  },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "OAuthClient" ("id", "kind", "name", "redirectUris", "clientUri", "registeredFrom", "authMethod", "secretHash")
    VALUES (${client.id}, 'dcr', ${client.name}, ${client.redirectUris}, ${client.clientUri}, ${client.registeredFrom},
            ${client.authMethod}, ${client.secretHash})`;
}

/** Clients registered from this address, and from anywhere, in the last hour (the registration rate limit). */
export async function countRecentRegistrations(db: Db, address: string): Promise<{ fromAddress: number; all: number }> {
  const [row] = await db.$queryRaw<{ fromAddress: number; all: number }[]>`
    SELECT count(*) FILTER (WHERE "registeredFrom" = ${address})::int AS "fromAddress", count(*)::int AS "all"
    FROM "OAuthClient" WHERE "kind" = 'dcr' AND "createdAt" > CURRENT_TIMESTAMP - interval '1 hour'`;
  return row;
}

/**
 * Counts one metadata document fetch in this minute's buckets of the person who caused it ("m:u:" and their id)
 * and of the host it goes to ("m:h:" and the host name); returns both as the count left them.
 */
export async function countMetadataFetch(
  db: Db,
  fetch: { userId: string; host: string },
): Promise<{ key: string; count: number; retryAfter: number }[]> {
  return db.$queryRaw(countCall(Prisma.sql`ARRAY[${`m:u:${fetch.userId}`}::text, ${`m:h:${fetch.host}`}::text]`));
}
