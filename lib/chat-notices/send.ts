import { WebAPIPlatformError, WebAPIRateLimitedError, type WebClient } from "@slack/web-api";
import { z } from "zod";
import { db } from "../db";
import { logInfo } from "../observe/log";
import { decryptSecret } from "../security/secrets";
import { outboundFetch, type OutboundResponse } from "../security/outbound";
import { chatSecretContext } from "./channels";
import { ChatNoticeSchema, type ChatNotice } from "./notice";
import { slackClient } from "./slack-client";
import { slackMessage } from "./slack-message";
import { findChatChannel, findSlackMessage, markSlackPosted, markSlackShown, type ChatProvider } from "./sql";
import { teamsMessage } from "./teams-card";

// The outbox's sender for chat (lib/mail/delivery.ts hands it these rows): a held call is posted once (a retried
// post first looks in the channel for the message an earlier send may have posted without hearing back), and each
// later change updates the Slack message it made, or follows the Teams card with another. Everything it needs is
// read at send time: the tenant's current token, channel and URL (a removed channel is sent nothing), and the
// Slack message's channel and ts as stored when it was posted. Any failure throws, and the outbox retries.

export const CHAT_KINDS = ["slack_notice", "slack_update", "teams_notice", "teams_update"] as const;
export type ChatKind = (typeof CHAT_KINDS)[number];

/** Longest a provider's "retry after" is honoured before the row is tried again anyway. */
const MAX_WAIT_SECONDS = 15 * 60;

/**
 * The provider asked to be called later (HTTP 429 with Retry-After): the outbox sends again after that long without
 * counting an attempt, so a burst of held calls is slowed down, not dead-lettered (for a day from the row's first
 * attempt; past it the attempt counts, and the next still waits at least that long: lib/mail/delivery.ts).
 */
export class RetryLater extends Error {
  constructor(
    readonly seconds: number,
    message: string,
  ) {
    super(message);
    this.name = "RetryLater";
  }
}

/**
 * How long an update waits, uncounted, for the message it changes to be posted (the post may be retrying through an
 * outage); past it the update counts its attempts like any send, and dead-letters if the post never came.
 */
const POST_WAIT_MS = 24 * 3600_000;
const POST_POLL_SECONDS = 15;

const waitOf = (seconds: number) => Math.min(Math.max(Number.isFinite(seconds) ? seconds : 60, 1), MAX_WAIT_SECONDS);

/** An HTTP 429 from `who` as RetryLater, waiting its Retry-After in seconds (a minute when it gives none). */
export function rateLimitedBy(response: OutboundResponse, who: string): RetryLater {
  const seconds = Number(response.headers["retry-after"] ?? 60);
  return new RetryLater(waitOf(seconds), `${who} is rate limiting: retry after ${seconds} s`);
}

/** A Slack call whose rate limit becomes RetryLater. */
async function slackCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof WebAPIRateLimitedError)
      throw new RetryLater(
        waitOf(error.retryAfter),
        `Slack is rate limiting this app: retry after ${error.retryAfter} s`,
      );
    throw error;
  }
}

export const isChatKind = (kind: string): kind is ChatKind => (CHAT_KINDS as readonly string[]).includes(kind);

/** `attempts` counts this one: past 1, an earlier send of the row may have reached Slack and lost its answer. */
export async function sendChatNotice(row: {
  tenantId: string;
  kind: ChatKind;
  body: string;
  attempts: number;
}): Promise<void> {
  const notice = ChatNoticeSchema.parse(JSON.parse(row.body));
  if (row.kind === "slack_notice") return postToSlack(row.tenantId, notice, row.attempts > 1);
  if (row.kind === "slack_update") return updateInSlack(row.tenantId, notice);
  return postToTeams(row.tenantId, notice, row.kind === "teams_update");
}

async function connected(tenantId: string, provider: ChatProvider) {
  const channel = await findChatChannel(db, tenantId, provider);
  if (!channel) throw new Error(`the tenant has no ${provider === "slack" ? "Slack" : "Teams"} channel connected`);
  return { channel: channel.channel, secret: decryptSecret(channel.secret, chatSecretContext(tenantId, provider)) };
}

/** Marks each posted message with its request, so a retry can find the message an earlier send posted. */
const SLACK_EVENT_TYPE = "toolgate_approval";

const PostedMetadataSchema = z.object({
  event_type: z.literal(SLACK_EVENT_TYPE),
  event_payload: z.object({ approval_id: z.string() }),
});

/** How far back a retry reads the channel: its newest messages since the notice was queued, at most this many. */
const HISTORY_LIMIT = 200;
/** Slack's clock, not ours, stamps the message: a minute's leeway for skew. */
const HISTORY_SKEW_MS = 60_000;

/**
 * Slack refusing the bot the channel's history: no `channels:history` (`groups:history` for a private channel), or a
 * bot that posts with `chat:write.public` to a channel it never joined.
 */
const HISTORY_REFUSALS = ["missing_scope", "not_in_channel"];

async function postToSlack(tenantId: string, notice: ChatNotice, retry: boolean): Promise<void> {
  const stored = await findSlackMessage(db, notice.approvalId);
  // A send whose claim lapsed after Slack took the message: it is there, and posting again would make two.
  if (stored?.ts) return;
  const slack = await connected(tenantId, "slack");
  if (!slack.channel) throw new Error("the tenant's Slack connection has no channel");
  const channel = slack.channel;
  const api = slackClient(slack.secret);
  const shownAt = new Date(notice.state.at);
  // chat.postMessage takes no idempotency key: a retry looks for the message an earlier send may have posted.
  const earlier =
    retry && stored ? await findPostedTs(api, { tenantId, channel, notice, since: stored.queuedAt }) : null;
  if (earlier) {
    await markSlackPosted(db, notice.approvalId, { channel, ts: earlier, shownAt });
    return;
  }
  const posted = await slackCall(() =>
    api.chat.postMessage({
      channel,
      ...slackMessage(notice),
      metadata: { event_type: SLACK_EVENT_TYPE, event_payload: { approval_id: notice.approvalId } },
    }),
  );
  if (!posted.channel || !posted.ts) throw new Error("Slack answered without the message's channel and ts");
  await markSlackPosted(db, notice.approvalId, { channel: posted.channel, ts: posted.ts, shownAt });
}

/**
 * The ts of the request's message, as this token's bot posted it, among the channel's newest since the notice was
 * queued; null when there is none, or when the bot may not read the channel's history (the notice is then posted
 * anyway, and the log says so).
 */
async function findPostedTs(
  api: WebClient,
  search: { tenantId: string; channel: string; notice: ChatNotice; since: Date },
): Promise<string | null> {
  const { tenantId, channel, notice, since } = search;
  let history;
  try {
    history = await slackCall(() =>
      api.conversations.history({
        channel,
        oldest: ((since.getTime() - HISTORY_SKEW_MS) / 1000).toFixed(6),
        limit: HISTORY_LIMIT,
        include_all_metadata: true,
      }),
    );
  } catch (error) {
    if (!(error instanceof WebAPIPlatformError) || !HISTORY_REFUSALS.includes(error.data.error)) throw error;
    logInfo("chat.slack-history-refused", {
      tenantId,
      approvalId: notice.approvalId,
      reason: error.data.error,
      effect: "posting without looking for an earlier send's message: the channel may show it twice",
    });
    return null;
  }
  // Any app in the channel can attach metadata: only a message this token's bot posted is the earlier send's.
  const { bot_id: ownBot } = await slackCall(() => api.auth.test());
  const found = (history.messages ?? []).find(
    (message) =>
      ownBot !== undefined &&
      message.bot_id === ownBot &&
      PostedMetadataSchema.safeParse(message.metadata).data?.event_payload.approval_id === notice.approvalId,
  );
  return found?.ts ?? null;
}

async function updateInSlack(tenantId: string, notice: ChatNotice): Promise<void> {
  const message = await findSlackMessage(db, notice.approvalId);
  if (!message?.channel || !message.ts) {
    const reason = "the call's Slack message is not posted yet; its update waits for it";
    if (message && Date.now() - message.queuedAt.getTime() < POST_WAIT_MS)
      throw new RetryLater(POST_POLL_SECONDS, reason);
    throw new Error(reason);
  }
  const at = new Date(notice.state.at);
  // A later state already shown (this update was retried past it): showing this one would undo it.
  if (message.shownAt && message.shownAt > at) return;
  const slack = await connected(tenantId, "slack");
  const { channel, ts } = message;
  await slackCall(() => slackClient(slack.secret).chat.update({ channel, ts, ...slackMessage(notice) }));
  await markSlackShown(db, notice.approvalId, at);
}

async function postToTeams(tenantId: string, notice: ChatNotice, followUp: boolean): Promise<void> {
  const teams = await connected(tenantId, "teams");
  // Checked again at send, on the address actually connected, like the webhook's.
  const response = await outboundFetch(teams.secret, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(teamsMessage(notice, followUp)),
    timeoutMs: 5000,
    maxBytes: 64 * 1024,
    signed: true,
  });
  if (response.status === 429) throw rateLimitedBy(response, "the Teams workflow");
  if (response.status < 200 || response.status > 299) throw new Error(`the Teams workflow answered ${response.status}`);
}
