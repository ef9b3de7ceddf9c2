import { createHash } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

// A fake Slack Web API and a fake Teams workflow webhook: real HTTP servers on loopback that record every request,
// for the tests of the chat notices (lib/chat-notices/). Slack's methods answer as Slack does (200 with `ok`) and
// keep the channel's messages (posted, updated by the bot that posted them, read back with their metadata and bot);
// either can be taken down (every request answered 500) and brought back, and Slack can take a message and lose its
// answer.

export interface SlackCall {
  method: string;
  headers: IncomingHttpHeaders;
  /** The form fields as sent; `blocks` is Block Kit as JSON text. */
  form: Record<string, string>;
}

export interface SlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: string;
  metadata: { event_type: string; event_payload: Record<string, unknown> } | null;
  /** The bot that posted it: each token is its own app's bot (`botIdOf`). */
  botId: string;
}

/** The bot a token posts as, as Slack names it in a message's `bot_id` and auth.test's answer. */
export const botIdOf = (authorization: string | undefined) =>
  `B${createHash("sha256")
    .update(authorization ?? "")
    .digest("hex")
    .slice(0, 10)
    .toUpperCase()}`;

export interface FakeChat {
  /**
   * `down`: every request answered 500; `retryAfter`: answered 429 with that Retry-After (seconds); `refuse`: a
   * method answered `ok: false` with that error (`missing_scope`); `loseNextPost`: the next chat.postMessage is
   * posted, then answered never (the client times out) or its connection cut.
   */
  slack: {
    url: string;
    host: string;
    calls: SlackCall[];
    messages: SlackMessage[];
    down: boolean;
    retryAfter: number | null;
    refuse: Record<string, string>;
    loseNextPost: "late" | "cut" | null;
  };
  teams: { url: string; host: string; posts: { body: unknown }[]; down: boolean };
  close(): Promise<void>;
}

const readBody = (request: import("node:http").IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => resolve(body));
    request.on("error", reject);
  });

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );

export async function startFakeChat(): Promise<FakeChat> {
  let sequence = 0;
  const slack: FakeChat["slack"] = {
    url: "",
    host: "",
    calls: [],
    messages: [],
    down: false,
    retryAfter: null,
    refuse: {},
    loseNextPost: null,
  };
  const teams: FakeChat["teams"] = { url: "", host: "", posts: [], down: false };
  const slackServer = createServer(async (request, response) => {
    const form = Object.fromEntries(new URLSearchParams(await readBody(request)));
    const method = (request.url ?? "").replace(/^\/api\//, "");
    slack.calls.push({ method, headers: request.headers, form });
    if (slack.retryAfter !== null) {
      response.writeHead(429, { "retry-after": String(slack.retryAfter) }).end();
      return;
    }
    if (slack.down) {
      response.writeHead(500, { "content-type": "text/plain" }).end("internal error");
      return;
    }
    const refusal = slack.refuse[method];
    if (refusal) {
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ ok: false, error: refusal }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    if (method === "chat.postMessage") {
      sequence++;
      // Slack's ts is the time it took the message, unique in the channel.
      const ts = `${Math.floor(Date.now() / 1000)}.${String(sequence).padStart(6, "0")}`;
      const metadata = form.metadata ? (JSON.parse(form.metadata) as SlackMessage["metadata"]) : null;
      const botId = botIdOf(request.headers.authorization);
      slack.messages.push({ channel: form.channel, ts, text: form.text, blocks: form.blocks, metadata, botId });
      const lost = slack.loseNextPost;
      slack.loseNextPost = null;
      if (lost === "cut") request.socket.destroy();
      else if (lost !== "late") response.end(JSON.stringify({ ok: true, channel: form.channel, ts }));
    } else if (method === "chat.update") {
      const message = slack.messages.find((kept) => kept.channel === form.channel && kept.ts === form.ts);
      if (!message) {
        response.end(JSON.stringify({ ok: false, error: "message_not_found" }));
        return;
      }
      if (message.botId !== botIdOf(request.headers.authorization)) {
        response.end(JSON.stringify({ ok: false, error: "cant_update_message" }));
        return;
      }
      Object.assign(message, { text: form.text, blocks: form.blocks });
      response.end(JSON.stringify({ ok: true, channel: form.channel, ts: form.ts, text: form.text }));
    } else if (method === "conversations.history") {
      // Newest first, after `oldest`, at most `limit`; metadata only when asked for.
      const messages = slack.messages
        .filter((kept) => kept.channel === form.channel && Number(kept.ts) > Number(form.oldest ?? 0))
        .reverse()
        .slice(0, Number(form.limit ?? 100))
        .map(({ ts, text, blocks, metadata, botId }) => ({
          type: "message",
          ts,
          bot_id: botId,
          text,
          blocks: JSON.parse(blocks) as unknown,
          ...(form.include_all_metadata === "true" && metadata ? { metadata } : {}),
        }));
      response.end(JSON.stringify({ ok: true, messages, has_more: false }));
    } else if (method === "auth.test") {
      response.end(JSON.stringify({ ok: true, bot_id: botIdOf(request.headers.authorization) }));
    } else response.end(JSON.stringify({ ok: false, error: "unknown_method" }));
  });
  const teamsServer = createServer(async (request, response) => {
    const body = await readBody(request);
    teams.posts.push({ body: JSON.parse(body) });
    response.writeHead(teams.down ? 500 : 202).end();
  });
  const slackPort = await listen(slackServer);
  const teamsPort = await listen(teamsServer);
  slack.host = `127.0.0.1:${slackPort}`;
  slack.url = `http://${slack.host}/api/`;
  teams.host = `127.0.0.1:${teamsPort}`;
  teams.url = `http://${teams.host}/workflows/abc/triggers/manual/paths/invoke?sig=secret-signature`;
  return {
    slack,
    teams,
    close: async () => {
      slackServer.closeAllConnections();
      await new Promise((resolve) => slackServer.close(resolve));
      await new Promise((resolve) => teamsServer.close(resolve));
    },
  };
}
