import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

// A fake Slack Web API and a fake Teams workflow webhook: real HTTP servers on loopback that record every request,
// for the tests of the chat notices (lib/chat-notices/). Slack's methods answer as Slack does (200 with `ok`); either
// can be taken down (every request answered 500) and brought back.

export interface SlackCall {
  method: string;
  headers: IncomingHttpHeaders;
  /** The form fields as sent; `blocks` is Block Kit as JSON text. */
  form: Record<string, string>;
}

export interface FakeChat {
  /** `down`: every request answered 500; `retryAfter`: answered 429 with that Retry-After (seconds). */
  slack: { url: string; host: string; calls: SlackCall[]; down: boolean; retryAfter: number | null };
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
  const slack: FakeChat["slack"] = { url: "", host: "", calls: [], down: false, retryAfter: null };
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
    response.writeHead(200, { "content-type": "application/json" });
    if (method === "chat.postMessage") {
      sequence++;
      response.end(
        JSON.stringify({ ok: true, channel: form.channel, ts: `1765000000.${String(sequence).padStart(6, "0")}` }),
      );
    } else if (method === "chat.update")
      response.end(JSON.stringify({ ok: true, channel: form.channel, ts: form.ts, text: form.text }));
    else response.end(JSON.stringify({ ok: false, error: "unknown_method" }));
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
      await new Promise((resolve) => slackServer.close(resolve));
      await new Promise((resolve) => teamsServer.close(resolve));
    },
  };
}
