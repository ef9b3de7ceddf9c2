import type { Client, Db } from "../db";
import { APPROVAL_LINK_PATH } from "../db/outbox";
import { Prisma } from "../generated/prisma/client";

// The mail module's statements: the outbox as its sender claims and settles it, and the tenant's webhook.

export interface ClaimedMessage {
  id: string;
  tenantId: string;
  kind: string;
  recipient: string;
  subject: string;
  body: string;
  attempts: number;
  firstAttemptAt: Date;
}

/**
 * Claims up to `limit` messages due now (pending and due, or claimed longer than `leaseMinutes` ago), only the
 * tenant's when one is given, skipping rows another sender holds: marks them `sending`, counts the attempt (keeping
 * the time of the first) and returns them.
 */
export function claimOutboxMessages(
  db: Db,
  options: { limit: number; tenantId: string | null; leaseMinutes: number },
): Promise<ClaimedMessage[]> {
  return db.$queryRaw<ClaimedMessage[]>`
    UPDATE "OutboxMessage" SET "status" = 'sending', "claimedAt" = now(), "attempts" = "attempts" + 1,
      "firstAttemptAt" = COALESCE("firstAttemptAt", now())
    WHERE "id" IN (
      SELECT "id" FROM "OutboxMessage"
      WHERE (("status" = 'pending' AND "nextAttemptAt" <= now())
         OR ("status" = 'sending' AND "claimedAt" < now() - make_interval(mins => ${options.leaseMinutes})))
        AND (${options.tenantId}::text IS NULL OR "tenantId" = ${options.tenantId}::text)
      ORDER BY "nextAttemptAt" LIMIT ${options.limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING "id", "tenantId", "kind", "recipient", "subject", "body", "attempts", "firstAttemptAt"`;
}

// A stored body with any approval link's token (base64url) replaced by a marker, for a mail that has left the outbox:
// the auditor keeps recipient, subject and text (the request's id among them); the token lives on only as the hash
// in its ApprovalLink row, and in the recipient's mailbox. Only an approval email carries such a link, as a line of
// its own (lib/approvals/notify/approval-requested.ts): the same path in any other text (an upstream call's
// arguments in its approval email, a webhook's or a chat notice's fields) stays as it was sent. `n`: newline-sensitive,
// so `^` and `$` are a line's ends and no match runs over one.
const LINK_LINE = `^(https?://[^[:space:]]*${APPROVAL_LINK_PATH})[A-Za-z0-9_-]+$`;
const withoutToken = Prisma.sql`CASE WHEN "kind" = 'approval_email'
  THEN regexp_replace("body", ${LINK_LINE}, ${"\\1[removed]"}, 'gn') ELSE "body" END`;

/** Records a delivered message and, in the same statement, removes any approval link token from its stored body. */
export async function markMessageSent(db: Db, id: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "OutboxMessage" SET "status" = 'sent', "sentAt" = now(), "lastError" = NULL, "body" = ${withoutToken}
    WHERE "id" = ${id}`;
}

/**
 * Records a failed send: the message waits until `nextAttemptAt` with its body whole, or is dead and never sent
 * again, when the same statement removes its approval link token, which no one will receive.
 */
export async function markMessageFailed(
  db: Db,
  id: string,
  failure: { dead: boolean; lastError: string; nextAttemptAt: Date },
): Promise<void> {
  await db.$executeRaw`
    UPDATE "OutboxMessage" SET "status" = ${failure.dead ? "dead" : "pending"}, "lastError" = ${failure.lastError},
      "nextAttemptAt" = ${failure.nextAttemptAt}, "body" = CASE WHEN ${failure.dead}::boolean THEN ${withoutToken} ELSE "body" END
    WHERE "id" = ${id}`;
}

/** A send the receiver asked to make later (rate limited): due again at `nextAttemptAt`, the attempt not counted. */
export async function deferMessage(db: Db, id: string, deferral: { lastError: string; nextAttemptAt: Date }) {
  await db.$executeRaw`
    UPDATE "OutboxMessage" SET "status" = 'pending', "attempts" = "attempts" - 1, "lastError" = ${deferral.lastError},
      "nextAttemptAt" = ${deferral.nextAttemptAt}
    WHERE "id" = ${id}`;
}

/** The tenant's webhook URL and secret as stored (encrypted), or null when it has none; throws when there is no tenant. */
export async function findWebhook(db: Client, tenantId: string): Promise<{ url: string; secret: string } | null> {
  const tenant = await db.tenant.findUniqueOrThrow({
    where: { id: tenantId },
    select: { webhookUrl: true, webhookSecret: true },
  });
  return tenant.webhookUrl && tenant.webhookSecret ? { url: tenant.webhookUrl, secret: tenant.webhookSecret } : null;
}
