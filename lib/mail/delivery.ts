import { createHmac } from "node:crypto";
import nodemailer, { type Transporter } from "nodemailer";
import { db } from "../db";
import { logError } from "../observe/log";
import { decryptSecret, webhookSecretContext, webhookUrlContext } from "../security/secrets";
import { isChatKind, rateLimitedBy, RetryLater, sendChatNotice } from "../chat-notices/send";
import { env } from "../env";
import { outboundFetch, OutboundRefused } from "../security/outbound";
import {
  claimOutboxMessages,
  deferMessage,
  findWebhook,
  markMessageFailed,
  markMessageSent,
  type ClaimedMessage,
} from "./sql";

// The outbox: rows written inside the transaction that decided them, delivered afterwards by this sender.
// A row is claimed (status `sending`) in its own committed statement before anything is sent, so two senders
// never send one row. A sender that dies mid-send leaves the claim to lapse after CLAIM_LEASE_MINUTES; the
// row is then sent again with the same Message-ID, which is as close to exactly-once as SMTP allows.

const CLAIM_LEASE_MINUTES = 5;

/**
 * A failed send waits 2^attempts seconds, doubling from 2 s up to an hour: past that, with a long retry budget
 * (OUTBOX_MAX_ATTEMPTS), a wait would grow into years, and past the 43rd attempt beyond any date.
 */
const MAX_BACKOFF_SECONDS = 3600;

/**
 * How long, from the row's first attempt, a receiver's "retry later" (a 429) is obeyed without counting the attempt: a
 * day the sender was down is not the receiver's. Past it every send counts, still waiting at least as long as the
 * receiver asked, so a receiver that only ever answers 429 dead-letters the row instead of deferring it for ever.
 */
const MAX_DEFERRAL_MS = 24 * 3600_000;
/**
 * An uncounted wait is at least this fraction of the time the row has been deferred: a receiver (a tenant's webhook
 * is any address its admin sets) answering "Retry-After: 0" gets about 200 tries in the day, not one a second.
 */
const DEFERRAL_SLOWDOWN = 20;

export interface Delivery {
  sendMail(message: { from: string; to: string; subject: string; text: string; messageId: string }): Promise<unknown>;
}

let transport: Transporter | null = null;

export function smtpDelivery(): Delivery {
  transport ??= nodemailer.createTransport({
    host: env().SMTP_HOST,
    port: env().SMTP_PORT,
    secure: false,
    ignoreTLS: env().SMTP_IGNORE_TLS !== "0",
    connectionTimeout: 5000,
  });
  return transport;
}

export interface OutboxReport {
  sent: number;
  retried: number;
  dead: number;
}

export async function deliverOutbox(
  options: { limit?: number; delivery?: Delivery; tenantId?: string } = {},
): Promise<OutboxReport> {
  const delivery = options.delivery ?? smtpDelivery();
  const claimed = await claimOutboxMessages(db, {
    limit: options.limit ?? 20,
    tenantId: options.tenantId ?? null,
    leaseMinutes: CLAIM_LEASE_MINUTES,
  });
  const report: OutboxReport = { sent: 0, retried: 0, dead: 0 };
  for (const row of claimed) {
    try {
      if (row.kind === "webhook") await postWebhook(row);
      else if (isChatKind(row.kind)) await sendChatNotice({ ...row, kind: row.kind });
      else {
        await delivery.sendMail({
          from: env().MAIL_FROM,
          to: row.recipient,
          subject: row.subject,
          text: row.body,
          messageId: `<${row.id}@toolgate.local>`,
        });
      }
      await markMessageSent(db, row.id);
      report.sent++;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const deferredMs = Date.now() - row.firstAttemptAt.getTime();
      if (error instanceof RetryLater && deferredMs < MAX_DEFERRAL_MS) {
        await deferMessage(db, row.id, {
          lastError: message.slice(0, 500),
          nextAttemptAt: new Date(Date.now() + Math.max(error.seconds * 1000, deferredMs / DEFERRAL_SLOWDOWN)),
        });
        report.retried++;
        continue;
      }
      if (error instanceof OutboundRefused)
        logError("outbox.outbound-refused", error, { messageId: row.id, kind: row.kind });
      const dead = error instanceof WebhookReplaced || row.attempts >= env().OUTBOX_MAX_ATTEMPTS;
      const backoff = Math.min(2 ** row.attempts, MAX_BACKOFF_SECONDS);
      const wait = error instanceof RetryLater ? Math.max(backoff, error.seconds) : backoff;
      await markMessageFailed(db, row.id, {
        dead,
        lastError: message.slice(0, 500),
        nextAttemptAt: new Date(Date.now() + wait * 1000),
      });
      if (dead) {
        report.dead++;
        logError("outbox.dead-letter", error, { messageId: row.id, kind: row.kind });
      } else report.retried++;
    }
  }
  return report;
}

/** Signed as `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">` with the tenant's webhook secret. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** A delivery whose webhook was replaced or removed after it was queued: it is sent nowhere, and not tried again. */
class WebhookReplaced extends Error {
  constructor() {
    super("the tenant's webhook was replaced or removed since this delivery was queued");
    this.name = "WebhookReplaced";
  }
}

async function postWebhook(row: ClaimedMessage): Promise<void> {
  // The recipient is the tenant's webhook URL as stored when the delivery was queued: encrypted, since such URLs
  // often carry a token.
  const url = decryptSecret(row.recipient, webhookUrlContext(row.tenantId));
  // A delivery goes only to the webhook it was queued for, signed with that webhook's own secret: an address the
  // tenant has since replaced (perhaps one that fell into other hands) gets nothing more, least of all a body signed
  // with the secret its successor trusts.
  const webhook = await findWebhook(db, row.tenantId);
  if (!webhook || decryptSecret(webhook.url, webhookUrlContext(row.tenantId)) !== url) throw new WebhookReplaced();
  const secret = decryptSecret(webhook.secret, webhookSecretContext(row.tenantId));
  const timestamp = Math.floor(Date.now() / 1000);
  // Checked again at send, on the address actually connected: the name may resolve elsewhere since it was saved.
  const response = await outboundFetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-toolgate-signature": webhookSignature(secret, timestamp, row.body),
      "x-toolgate-delivery": row.id,
    },
    body: row.body,
    timeoutMs: 5000,
    maxBytes: 64 * 1024,
    signed: true,
  });
  // A receiver that asks to be called later is obeyed as a chat provider is (the same day of uncounted waits).
  if (response.status === 429) throw rateLimitedBy(response, "the webhook");
  if (response.status < 200 || response.status > 299) throw new Error(`webhook answered ${response.status}`);
}
