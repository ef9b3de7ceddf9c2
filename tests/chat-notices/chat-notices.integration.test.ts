import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { approveChange, pendingChanges } from "@/lib/admin/changes/two-admin";
import { connectChatChannel, disconnectChatChannel } from "@/lib/admin/policy/chat-notices";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { expireDue } from "@/lib/approvals/expiry/expire";
import { db } from "@/lib/db";
import { env } from "@/lib/env";
import { deliverOutbox } from "@/lib/mail/delivery";
import { connectChatApproved } from "../support/admin-changes";
import { ownExternals, sinkTransport } from "../support/externals";
import { botIdOf, startFakeChat, type FakeChat, type SlackCall } from "../support/fake-chat";
import { agentConversation, holdRefund, refundArguments, supervisorOf } from "../support/calls";
import { MCP_BASE, routeFetch } from "../support/mcp-route";
import { noProof, provedFor } from "../support/step-up";
import { addPerson, createWorld, type World } from "../support/world";

const externals = ownExternals();
let chat: FakeChat;
const saved = { SLACK_API_URL: process.env.SLACK_API_URL, OUTBOUND_ALLOWED_HOSTS: process.env.OUTBOUND_ALLOWED_HOSTS };

beforeAll(async () => {
  chat = await startFakeChat();
  process.env.SLACK_API_URL = chat.slack.url;
  // The fakes are local: the operator's allowlist is what lets this server send to loopback at all.
  process.env.OUTBOUND_ALLOWED_HOSTS = `${chat.slack.host},${chat.teams.host}`;
});

afterAll(async () => {
  await chat.close();
  for (const [name, value] of Object.entries(saved))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});

const SLACK = { provider: "slack", channel: "C0TESTCHAN1", token: "xoxb-1111-2222-abcdefghijklmnop" } as const;

const deliver = (world: World) =>
  deliverOutbox({ delivery: sinkTransport(externals), limit: 100, tenantId: world.tenantId });

/** Makes every undelivered row of the tenant due now, as if its backoff had passed. */
const due = (world: World) =>
  db.outboxMessage.updateMany({
    where: { tenantId: world.tenantId, status: "pending" },
    data: { nextAttemptAt: new Date(0) },
  });

const chatRows = (world: World) =>
  db.outboxMessage.findMany({
    where: { tenantId: world.tenantId, kind: { in: ["slack_notice", "slack_update", "teams_notice", "teams_update"] } },
    orderBy: { createdAt: "asc" },
  });

/** This test's Slack calls: those naming one of its requests. */
const slackCalls = (approvalId: string, method?: string) =>
  chat.slack.calls.filter(
    (call) => call.form.blocks?.includes(approvalId) && (method === undefined || call.method === method),
  );
/** A Teams card's JSON with Markdown escapes undone, as its reader sees the text. */
const teamsText = (post: { body: unknown }) => JSON.stringify(post.body).replace(/\\\\([\\`*_[\]~])/g, "$1");
const teamsPosts = (approvalId: string) => chat.teams.posts.filter((post) => teamsText(post).includes(approvalId));

/** Every text a person reads in a Slack message's blocks, and its button's link. */
function readSlack(call: SlackCall) {
  const blocks = JSON.parse(call.form.blocks) as {
    type: string;
    text?: { text: string };
    fields?: { text: string }[];
    elements?: { url?: string; text?: string | { text: string } }[];
  }[];
  const texts = blocks.flatMap((block) => [
    block.text?.text ?? "",
    ...(block.fields ?? []).map((field) => field.text),
    ...(block.elements ?? []).map((element) => (typeof element.text === "string" ? element.text : "")),
  ]);
  const buttons = blocks.filter((block) => block.type === "actions").flatMap((block) => block.elements ?? []);
  return { text: texts.join("\n"), buttons: buttons.map((button) => button.url) };
}

/** The messages the fake Slack channel holds for one request, whatever the sender recorded. */
const channelMessages = (approvalId: string) =>
  chat.slack.messages.filter((message) => message.blocks.includes(approvalId));

/** The Slack calls of one method made since `mark` (the length of the calls list then). */
const callsSince = (mark: number, method: string) =>
  chat.slack.calls.slice(mark).filter((call) => call.method === method);

const storedMessage = (approvalId: string) =>
  db.chatNotice.findUniqueOrThrow({ where: { approvalId_provider: { approvalId, provider: "slack" } } });

const deskLink = (approvalId: string) => `/approvals?q=${approvalId}#request-${approvalId}`;

describe("held calls in Slack and Teams, through the outbox", () => {
  it("a held refund posts one Slack message and one Teams card with the desk link; deciding it updates that same message", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    await connectChatApproved(world, { provider: "teams", url: chat.teams.url });
    const held = await holdRefund(world);
    // Never on the request path: the call was held and answered before anything reached Slack or Teams.
    expect(slackCalls(held.approvalId)).toHaveLength(0);
    expect(teamsPosts(held.approvalId)).toHaveLength(0);
    expect((await chatRows(world)).map((row) => [row.kind, row.status])).toEqual([
      ["slack_notice", "pending"],
      ["teams_notice", "pending"],
    ]);

    await deliver(world);
    const posts = slackCalls(held.approvalId, "chat.postMessage");
    expect(posts).toHaveLength(1);
    expect(posts[0].form.channel).toBe(SLACK.channel);
    expect(posts[0].headers.authorization).toBe(`Bearer ${SLACK.token}`);
    const ana = await db.customer.findUniqueOrThrow({ where: { id: world.customers.ana } });
    const posted = readSlack(posts[0]);
    expect(posted.text).toContain(`Approval needed: 80.00 USD refund on ${world.orders.o1004}`);
    expect(posted.text).toContain("*Agent*\nAgent");
    expect(posted.text).toContain(`*Customer*\n${ana.email} (${ana.id})`);
    expect(posted.text).toContain("*Amount*\n80.00 USD");
    expect(posted.text).toContain("80.00 USD is above the 50.00 USD limit for refunds without approval");
    expect(posted.buttons).toHaveLength(1);
    expect(posted.buttons[0]).toMatch(/^https?:\/\/[^/]+\/approvals\?q=/);
    expect(posted.buttons[0]!.endsWith(deskLink(held.approvalId))).toBe(true);
    const stored = await db.chatNotice.findUniqueOrThrow({
      where: { approvalId_provider: { approvalId: held.approvalId, provider: "slack" } },
    });
    expect(stored).toMatchObject({ channel: SLACK.channel, ts: expect.stringMatching(/^\d+\.\d{6}$/) });

    const cards = teamsPosts(held.approvalId);
    expect(cards).toHaveLength(1);
    const card = JSON.stringify(cards[0].body);
    expect(card).toContain('"contentType":"application/vnd.microsoft.card.adaptive"');
    expect(card).toContain(`"type":"Action.OpenUrl","title":"Open on the desk","url":"${posted.buttons[0]}"`);
    expect(card).toContain("80.00 USD");

    const decided = await approveRequest(supervisorOf(world), held.approvalId);
    expect(decided).toMatchObject({ ok: true, status: "approved" });
    expect(slackCalls(held.approvalId, "chat.update")).toHaveLength(0);
    await deliver(world);
    const updates = slackCalls(held.approvalId, "chat.update");
    expect(updates).toHaveLength(1);
    // The same message: the channel and ts stored when it was posted, and no second message.
    expect(updates[0].form).toMatchObject({ channel: stored.channel, ts: stored.ts });
    expect(slackCalls(held.approvalId, "chat.postMessage")).toHaveLength(1);
    const updated = readSlack(updates[0]);
    expect(updated.text).toContain(`Approved by Supervisor: 80.00 USD refund on ${world.orders.o1004}`);
    expect(updated.buttons).toHaveLength(0);
    // Teams cannot change a posted card: the decision follows as a second card.
    expect(teamsPosts(held.approvalId)).toHaveLength(2);
    expect(teamsText(teamsPosts(held.approvalId)[1])).toContain("Update: Approved by Supervisor");
    expect((await chatRows(world)).every((row) => row.status === "sent")).toBe(true);

    await deliver(world);
    expect(slackCalls(held.approvalId)).toHaveLength(2);
    expect(teamsPosts(held.approvalId)).toHaveLength(2);
  });

  it("a Slack outage leaves the outbox retrying and the approval unaffected; back up, the message is posted, then updated", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    chat.slack.down = true;
    try {
      const held = await holdRefund(world);
      await deliver(world);
      const [notice] = await chatRows(world);
      expect(notice).toMatchObject({ kind: "slack_notice", status: "pending", attempts: 1 });
      expect(notice.lastError).toContain("500");
      expect(notice.nextAttemptAt.getTime()).toBeGreaterThan(Date.now());

      const decided = await approveRequest(supervisorOf(world), held.approvalId);
      expect(decided).toMatchObject({ ok: true, status: "approved", outcome: { code: "refund.issued" } });
      const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: held.approvalId } });
      expect(request.status).toBe("approved");
      expect((await chatRows(world)).map((row) => row.kind)).toEqual(["slack_notice", "slack_update"]);

      await due(world);
      await deliver(world);
      const [post, update] = await chatRows(world);
      expect(post).toMatchObject({ status: "pending", attempts: 2 });
      // The update waits for the message without spending its attempts while the post retries.
      expect(update).toMatchObject({
        status: "pending",
        attempts: 0,
        lastError: "the call's Slack message is not posted yet; its update waits for it",
      });
      chat.slack.down = false;
      for (let round = 0; round < 3; round++) {
        await due(world);
        await deliver(world);
      }
      expect((await chatRows(world)).map((row) => row.status)).toEqual(["sent", "sent"]);
      const stored = await db.chatNotice.findUniqueOrThrow({
        where: { approvalId_provider: { approvalId: held.approvalId, provider: "slack" } },
      });
      // The update waited for the message instead of calling Slack without one, then changed that message.
      const updates = slackCalls(held.approvalId, "chat.update");
      expect(updates).toHaveLength(1);
      expect(updates[0].form).toMatchObject({ channel: SLACK.channel, ts: stored.ts });
      expect(readSlack(updates[0]).text).toContain("Approved by Supervisor");
    } finally {
      chat.slack.down = false;
    }
  });

  it("after the retry budget a Slack notice is a dead letter, and the request is still decided on the desk", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    chat.slack.down = true;
    try {
      const mark = chat.slack.calls.length;
      const held = await holdRefund(world);
      for (let attempt = 1; attempt <= env().OUTBOX_MAX_ATTEMPTS; attempt++) {
        await due(world);
        await deliver(world);
        const [notice] = await chatRows(world);
        expect(notice.attempts).toBe(attempt);
        expect(notice.status).toBe(attempt < env().OUTBOX_MAX_ATTEMPTS ? "pending" : "dead");
      }
      // Each retry first looks for a message the failed post may have left, and finds Slack still down.
      expect(slackCalls(held.approvalId, "chat.postMessage")).toHaveLength(1);
      expect(callsSince(mark, "conversations.history")).toHaveLength(env().OUTBOX_MAX_ATTEMPTS - 1);
      const decided = await approveRequest(supervisorOf(world), held.approvalId);
      expect(decided).toMatchObject({ ok: true, status: "approved" });
    } finally {
      chat.slack.down = false;
    }
  });

  it("a first post carries the request's id in its metadata and reads no history", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    const mark = chat.slack.calls.length;
    const held = await holdRefund(world);
    await deliver(world);
    const [post] = slackCalls(held.approvalId, "chat.postMessage");
    expect(JSON.parse(post.form.metadata)).toEqual({
      event_type: "toolgate_approval",
      event_payload: { approval_id: held.approvalId },
    });
    expect(callsSince(mark, "conversations.history")).toHaveLength(0);
    expect((await chatRows(world))[0]).toMatchObject({ status: "sent", attempts: 1 });
  });

  it.each(["late", "cut"] as const)(
    "a post Slack took but whose answer was lost (%s) is found on the retry: one message, stored, then updated",
    async (lost) => {
      const world = await createWorld();
      await connectChatApproved(world, SLACK);
      const mark = chat.slack.calls.length;
      chat.slack.loseNextPost = lost;
      const held = await holdRefund(world);
      await deliver(world);
      const [notice] = await chatRows(world);
      expect(notice).toMatchObject({ kind: "slack_notice", status: "pending", attempts: 1 });
      const [message] = channelMessages(held.approvalId);
      expect(message).toBeDefined();
      expect((await storedMessage(held.approvalId)).ts).toBeNull();

      await due(world);
      await deliver(world);
      expect(channelMessages(held.approvalId)).toHaveLength(1);
      expect(slackCalls(held.approvalId, "chat.postMessage")).toHaveLength(1);
      const [history] = callsSince(mark, "conversations.history");
      expect(history.form).toMatchObject({ channel: SLACK.channel, include_all_metadata: "true", limit: "200" });
      const queuedAt = (await storedMessage(held.approvalId)).queuedAt.getTime() / 1000;
      expect(Number(history.form.oldest)).toBeLessThan(queuedAt);
      expect((await chatRows(world))[0]).toMatchObject({ status: "sent", attempts: 2 });
      expect(await storedMessage(held.approvalId)).toMatchObject({ channel: SLACK.channel, ts: message.ts });

      expect(await approveRequest(supervisorOf(world), held.approvalId)).toMatchObject({ ok: true });
      await deliver(world);
      expect(slackCalls(held.approvalId, "chat.update")).toHaveLength(1);
      expect(channelMessages(held.approvalId)).toEqual([
        expect.objectContaining({ ts: message.ts, text: expect.stringContaining("Approved by Supervisor") }),
      ]);
    },
  );

  it("a retry takes no other app's message for its own: one carrying the request's metadata is passed over, and the notice is posted", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    chat.slack.down = true;
    const held = await holdRefund(world);
    await deliver(world);
    chat.slack.down = false;
    expect((await chatRows(world))[0]).toMatchObject({ status: "pending", attempts: 1 });
    // Any app in the channel can attach metadata; this one copies the request's.
    const forged = await fetch(`${chat.slack.url}chat.postMessage`, {
      method: "POST",
      headers: {
        authorization: "Bearer xoxb-9999-8888-anotherappstoken",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({
        channel: SLACK.channel,
        text: "nothing to see",
        blocks: JSON.stringify([{ type: "section", text: { type: "mrkdwn", text: held.approvalId } }]),
        metadata: JSON.stringify({ event_type: "toolgate_approval", event_payload: { approval_id: held.approvalId } }),
      }),
    });
    expect(forged.ok).toBe(true);

    await due(world);
    await deliver(world);
    const [other, own] = channelMessages(held.approvalId);
    expect(own).toMatchObject({
      botId: botIdOf(`Bearer ${SLACK.token}`),
      text: expect.stringContaining("Approval needed"),
    });
    expect(other.botId).not.toBe(own.botId);
    expect((await chatRows(world))[0]).toMatchObject({ status: "sent", attempts: 2 });
    expect(await storedMessage(held.approvalId)).toMatchObject({ channel: SLACK.channel, ts: own.ts });

    expect(await approveRequest(supervisorOf(world), held.approvalId)).toMatchObject({ ok: true });
    await deliver(world);
    expect(channelMessages(held.approvalId)[1]).toMatchObject({
      ts: own.ts,
      text: expect.stringContaining("Approved by Supervisor"),
    });
    expect((await chatRows(world)).every((row) => row.status === "sent")).toBe(true);
  });

  it.each(["missing_scope", "not_in_channel"])(
    "a retry whose bot may not read the channel (%s) posts anyway and says so once in the log",
    async (refusal) => {
      const world = await createWorld();
      await connectChatApproved(world, SLACK);
      const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
      chat.slack.refuse["conversations.history"] = refusal;
      try {
        const mark = chat.slack.calls.length;
        chat.slack.loseNextPost = "cut";
        const held = await holdRefund(world);
        await deliver(world);
        await due(world);
        await deliver(world);
        expect(callsSince(mark, "conversations.history")).toHaveLength(1);
        // It could not look, so it posted again: the second message is the one kept and updated.
        const posted = channelMessages(held.approvalId);
        expect(posted).toHaveLength(2);
        expect((await chatRows(world))[0]).toMatchObject({ status: "sent", attempts: 2 });
        expect(await storedMessage(held.approvalId)).toMatchObject({ ts: posted[1].ts });
        const lines = logged.mock.calls
          .map(([line]) => String(line))
          .filter((line) => line.includes("chat.slack-history-refused"));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(held.approvalId);
        expect(lines[0]).toContain(refusal);
      } finally {
        delete chat.slack.refuse["conversations.history"];
        logged.mockRestore();
      }
    },
  );

  it("the same call proposed again after its request expired closes the old message as expired and posts the new one", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    const first = await holdRefund(world);
    await deliver(world);
    await db.approvalRequest.update({
      where: { id: first.approvalId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const second = await holdRefund(world, { conversation: first.conversation });
    expect(second.approvalId).not.toBe(first.approvalId);
    await deliver(world);
    const [update] = slackCalls(first.approvalId, "chat.update");
    expect(readSlack(update).text).toContain("Expired, nobody decided");
    expect(slackCalls(second.approvalId, "chat.postMessage")).toHaveLength(1);
  });

  it("a rate-limited Slack slows the notices down without spending their attempts", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    chat.slack.retryAfter = 30;
    try {
      const held = await holdRefund(world);
      for (let round = 0; round <= env().OUTBOX_MAX_ATTEMPTS; round++) {
        await due(world);
        await deliver(world);
      }
      const [notice] = await chatRows(world);
      expect(notice).toMatchObject({ status: "pending", attempts: 0 });
      expect(notice.lastError).toContain("Slack is rate limiting this app: retry after 30 s");
      expect(notice.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 25_000);
      chat.slack.retryAfter = null;
      await due(world);
      await deliver(world);
      expect((await chatRows(world))[0]).toMatchObject({ status: "sent", attempts: 1 });
      expect(slackCalls(held.approvalId, "chat.postMessage")).toHaveLength(env().OUTBOX_MAX_ATTEMPTS + 2);
    } finally {
      chat.slack.retryAfter = null;
    }
  });

  it("a receiver that has answered only 429 for a day from the first try spends the notice's attempts, each waiting at least its Retry-After, and dead-letters it", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    chat.slack.retryAfter = 600;
    try {
      await holdRefund(world);
      await deliver(world);
      expect((await chatRows(world))[0]).toMatchObject({ status: "pending", attempts: 0 });
      await db.outboxMessage.updateMany({
        where: { tenantId: world.tenantId, kind: "slack_notice" },
        data: { firstAttemptAt: new Date(Date.now() - 24 * 3600_000 - 60_000) },
      });
      const waits: number[] = [];
      for (let attempt = 1; attempt <= env().OUTBOX_MAX_ATTEMPTS; attempt++) {
        await due(world);
        await deliver(world);
        const after = Date.now();
        const [notice] = await chatRows(world);
        expect(notice.attempts).toBe(attempt);
        if (attempt < env().OUTBOX_MAX_ATTEMPTS) waits.push(Math.ceil((notice.nextAttemptAt.getTime() - after) / 1000));
      }
      // The backoff (2, 4, 8 … s), never sooner than the receiver asked.
      expect(waits).toEqual([600, 600, 600, 600, 600, 600, 600, 600, 600, 1024, 2048]);
      const [notice] = await chatRows(world);
      expect(notice).toMatchObject({ status: "dead", attempts: env().OUTBOX_MAX_ATTEMPTS });
      expect(notice.lastError).toContain("Slack is rate limiting this app");
    } finally {
      chat.slack.retryAfter = null;
    }
  });

  it("a notice queued over a day before the sender first tries it still gets its day of uncounted deferrals", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    chat.slack.retryAfter = 30;
    try {
      await holdRefund(world);
      // Queued while the sender was down for two days.
      await db.outboxMessage.updateMany({
        where: { tenantId: world.tenantId, kind: "slack_notice" },
        data: { createdAt: new Date(Date.now() - 48 * 3600_000) },
      });
      const before = Date.now();
      for (let round = 0; round <= env().OUTBOX_MAX_ATTEMPTS; round++) {
        await due(world);
        await deliver(world);
      }
      const [notice] = await chatRows(world);
      expect(notice).toMatchObject({ status: "pending", attempts: 0 });
      expect(notice.firstAttemptAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(notice.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 25_000);
      chat.slack.retryAfter = null;
      await due(world);
      await deliver(world);
      expect((await chatRows(world))[0]).toMatchObject({ status: "sent", attempts: 1 });
    } finally {
      chat.slack.retryAfter = null;
    }
  });

  it("the first of two approvals says the call waits for a second supervisor; its expiry says nobody decided; both update the one message", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { twoPersonAboveCents: 5000 } });
    await connectChatApproved(world, SLACK);
    const held = await holdRefund(world);
    await deliver(world);
    const first = await approveRequest(supervisorOf(world), held.approvalId);
    expect(first).toMatchObject({ ok: true, status: "partial" });
    await deliver(world);
    await db.approvalRequest.update({
      where: { id: held.approvalId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(await expireDue(world.tenantId)).toBe(1);
    await deliver(world);
    const stored = await db.chatNotice.findUniqueOrThrow({
      where: { approvalId_provider: { approvalId: held.approvalId, provider: "slack" } },
    });
    const updates = slackCalls(held.approvalId, "chat.update");
    expect(updates.map((call) => [call.form.channel, call.form.ts])).toEqual([
      [SLACK.channel, stored.ts],
      [SLACK.channel, stored.ts],
    ]);
    expect(readSlack(updates[0]).text).toContain("Approved once by Supervisor, waits for a second supervisor");
    expect(readSlack(updates[0]).buttons).toHaveLength(1);
    expect(readSlack(updates[1]).text).toContain("Expired, nobody decided");
    expect(slackCalls(held.approvalId, "chat.postMessage")).toHaveLength(1);
  });

  it("an agent cancelling its held call's MCP task updates the message: withdrawn before anyone decided", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    const conversation = await agentConversation(world);
    const client = new Client(
      { name: "chat-notice-test", version: "1.0.0" },
      { capabilities: { tasks: { cancel: {} } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`/api/mcp?conversation=${conversation}`, MCP_BASE), {
        requestInit: { headers: { authorization: `Bearer ${world.keys.agent}` } },
        fetch: routeFetch,
      }),
    );
    const { task } = await client.request(
      {
        method: "tools/call",
        params: { name: "issue_refund", arguments: refundArguments(world.orders.o1004, 8000), task: { ttl: 600_000 } },
      },
      CreateTaskResultSchema,
    );
    const request = await db.approvalRequest.findFirstOrThrow({ where: { tenantId: world.tenantId } });
    await deliver(world);
    await client.experimental.tasks.cancelTask(task.taskId);
    await client.close();
    await deliver(world);
    const [update] = slackCalls(request.id, "chat.update");
    expect(readSlack(update).text).toContain("Withdrawn by the agent before anyone decided");
    expect(readSlack(update).buttons).toHaveLength(0);
  });

  it("a name with Slack or Markdown markup shows as written: it pings nobody and links nothing", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    await connectChatApproved(world, { provider: "teams", url: chat.teams.url });
    await db.user.update({
      where: { id: world.users.agent },
      data: { name: "Bot <!channel> <https://evil.test|open> [click](https://evil.test)" },
    });
    const held = await holdRefund(world);
    await deliver(world);
    const [post] = slackCalls(held.approvalId, "chat.postMessage");
    expect(post.form.blocks).toContain("Bot &lt;!channel&gt; &lt;https://evil.test|open&gt;");
    expect(post.form.blocks).not.toContain("<!channel>");
    expect(post.form.blocks).not.toContain("<https://evil.test");
    const [card] = teamsPosts(held.approvalId);
    expect(JSON.stringify(card.body)).toContain(String.raw`\\[click\\](https://evil.test)`);
  });
});

describe("connecting Slack and Teams", () => {
  it("needs a step-up for that channel, then waits for a second admin; the token is stored encrypted and never audited", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const second = await addPerson(world, `${world.users.admin}_second`, "ADMIN", "Second Admin");
    const channels = () => db.chatChannel.findMany({ where: { tenantId: world.tenantId } });

    expect(await connectChatChannel(admin, SLACK, await noProof(admin.id))).toMatchObject({
      ok: false,
      code: "step-up.required",
    });
    const otherChannel = await provedFor(admin.id, { kind: "admin.chat", provider: "slack", target: "C0OTHERCHAN" });
    expect(await connectChatChannel(admin, SLACK, otherChannel)).toMatchObject({ ok: false, code: "step-up.required" });
    expect(await channels()).toHaveLength(0);

    const proof = await provedFor(admin.id, { kind: "admin.chat", provider: "slack", target: SLACK.channel });
    const saved = await connectChatChannel(admin, SLACK, proof);
    expect(saved).toMatchObject({ ok: true, held: { mode: "second-admin" } });
    expect(await channels()).toHaveLength(0);
    const held = saved.ok && saved.held ? saved.held : null;
    // What the second admin is shown, and every supervisor emailed: where the notices would go, never the token.
    expect((await pendingChanges(world.tenantId)).map((waiting) => waiting.lines)).toEqual([
      [
        `Held calls in chat: none → Slack channel ${SLACK.channel} (each held call's agent, customer, amount and reasons are posted there)`,
      ],
    ]);
    const mails = await db.outboxMessage.findMany({ where: { tenantId: world.tenantId, kind: "admin_change_email" } });
    expect(mails.length).toBeGreaterThan(0);
    expect(JSON.stringify(mails)).not.toContain(SLACK.token);
    const change = await db.adminChange.findUniqueOrThrow({ where: { id: held!.id } });
    const approvedBy = await provedFor(second, {
      kind: "admin.change-approved",
      changeId: change.id,
      digest: change.digest,
    });
    expect(await approveChange({ id: second, tenantId: world.tenantId }, change.id, change.digest, approvedBy)).toEqual(
      {
        ok: true,
      },
    );
    const [stored] = await channels();
    expect(stored).toMatchObject({
      provider: "slack",
      channel: SLACK.channel,
      secret: expect.stringMatching(/^enc:v1:/),
    });
    const audit = await db.auditLog.findMany({ where: { tenantId: world.tenantId } });
    expect(
      JSON.stringify(audit, (_, value: unknown) => (typeof value === "bigint" ? String(value) : value)),
    ).not.toContain(SLACK.token);
    expect(JSON.stringify(stored)).not.toContain(SLACK.token);
  });

  it("refuses a Teams workflow URL at a loopback, private or metadata address, storing nothing", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    for (const url of ["http://169.254.169.254/latest/meta-data", "http://10.0.0.8/hook", "http://127.0.0.1:9/hook"]) {
      const proof = await provedFor(admin.id, { kind: "admin.chat", provider: "teams", target: url });
      expect(await connectChatChannel(admin, { provider: "teams", url }, proof)).toMatchObject({
        ok: false,
        code: "outbound.forbidden-address",
      });
    }
    expect(await db.chatChannel.count({ where: { tenantId: world.tenantId } })).toBe(0);
  });

  it("disconnecting applies at once: a notice still queued is sent nowhere", async () => {
    const world = await createWorld();
    await connectChatApproved(world, SLACK);
    const held = await holdRefund(world);
    await disconnectChatChannel({ id: world.users.admin, tenantId: world.tenantId }, "slack");
    await deliver(world);
    expect(slackCalls(held.approvalId)).toHaveLength(0);
    const [notice] = await chatRows(world);
    expect(notice).toMatchObject({ status: "pending", lastError: "the tenant has no Slack channel connected" });
  });
});
