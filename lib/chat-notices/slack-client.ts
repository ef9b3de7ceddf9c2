import { LogLevel, WebClient, type FetchFunction } from "@slack/web-api";
import { env } from "../env";
import { outboundFetch } from "../security/outbound";

/**
 * Slack's client sends through the outbound guard (lib/security/outbound.ts): to checked addresses only, bounded
 * in size and time, following no redirect. The base URL is the operator's (SLACK_API_URL), never a tenant's.
 */
const guardedFetch: FetchFunction = async (url, init) => {
  if (init?.body !== undefined && typeof init.body !== "string")
    throw new Error("toolgate sends Slack no files: a form body is not expected");
  const answer = await outboundFetch(url, {
    method: "POST",
    headers: init?.headers,
    body: init?.body,
    timeoutMs: 5000,
    maxBytes: 256 * 1024,
    // The bot token rides in every request: https only, in production.
    signed: true,
  });
  const text = answer.body.toString("utf8");
  const headers = Object.entries(answer.headers).map(([name, value]): [string, string] => [
    name,
    Array.isArray(value) ? value.join(", ") : (value ?? ""),
  ]);
  return {
    ok: answer.status >= 200 && answer.status <= 299,
    status: answer.status,
    statusText: "",
    url: String(url),
    headers: {
      get: (name: string) => headers.find(([key]) => key === name.toLowerCase())?.[1] ?? null,
      entries: () => headers,
    },
    arrayBuffer: async () => new Uint8Array(answer.body).buffer,
    json: async () => JSON.parse(text) as unknown,
    text: async () => text,
  };
};

/**
 * A client for one tenant's bot token. It retries nothing itself and refuses a rate limit at once: the outbox
 * retries with its own backoff and dead-letters, and a send never waits in the sender.
 */
export function slackClient(token: string): WebClient {
  return new WebClient(token, {
    slackApiUrl: env().SLACK_API_URL,
    fetch: guardedFetch,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: 5000,
    allowAbsoluteUrls: false,
    logLevel: LogLevel.ERROR,
  });
}
