import { authenticateApiKey, authenticateCountedApiKey, type AuthenticatedAgent } from "../auth/keys/api-keys";
import { ALL_SCOPES } from "../oauth/consent/authorize-scopes";
import { canonicalJson } from "../canonical";
import { authenticateForConversation } from "../conversations/authenticate";
import type { FoundConversation } from "../conversations/lookup";
import { modelProjection, waitingOn, type Outcome } from "../outcome";
import type { CallResult, RateCount } from "../gateway";
import { servedOverHttps } from "../env";
import { errorResponse, leftUnread } from "../http";
import { logError, requestIdFrom, withLogContext } from "../observe/log";
import { countRequestLimited } from "../observe/metrics";
import { span } from "../observe/tracing";
import { HSTS } from "../security/headers";
import { malformedTarget } from "../security/request";

export const unauthorized = () =>
  errorResponse(401, "auth.invalid-key", "a valid API key is required", {
    "WWW-Authenticate": 'Bearer realm="toolgate"',
  });
const resourceMetadata = (issuer: string) => `${issuer}/.well-known/oauth-protected-resource/api/mcp`;

/**
 * The MCP route's 401 (RFC 9728 §5.1): where to find the resource's metadata, and so its authorization server,
 * and the scopes to ask for (MCP authorization 2025-11-25: a client asks for the challenge's scopes first).
 * A presented but unusable token (expired, revoked, another audience or key) is `invalid_token`.
 */
export const mcpUnauthorized = (issuer: string, presented: boolean) =>
  errorResponse(
    401,
    presented ? "auth.invalid-token" : "auth.required",
    presented
      ? "the access token or API key is not valid here (expired, revoked or for another server): authorize again"
      : "authorize with OAuth (this server's metadata is in WWW-Authenticate) or send an agent API key",
    {
      "WWW-Authenticate": `Bearer resource_metadata="${resourceMetadata(issuer)}", scope="${ALL_SCOPES.join(" ")}"${
        presented ? ', error="invalid_token"' : ""
      }`,
      "Cache-Control": "no-store",
    },
  );
/**
 * The MCP route's 403 for a tool whose scope the conversation holds but the connection was not granted (MCP
 * authorization 2025-11-25, scope challenge handling): the scopes the token has plus the one the call needs, so the
 * client can ask the person for them and keep what it has, instead of reconnecting.
 */
export const mcpInsufficientScope = (issuer: string, scopes: string[], tool: string) =>
  errorResponse(
    403,
    "auth.insufficient-scope",
    `${tool} needs the scope ${scopes.at(-1)}, which this connection was not granted: authorize again with it`,
    {
      "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${scopes.join(" ")}", resource_metadata="${resourceMetadata(
        issuer,
      )}", error_description="${tool} needs ${scopes.at(-1)}"`,
      "Cache-Control": "no-store",
    },
  );
export const notFound = (what: string) => errorResponse(404, "not-found", `${what} not found`);

/** A limit the agent API counts before the gateway (opening conversations, reading calls): 429 with Retry-After. */
export const rateLimited = (message: string, retryAfterSeconds: number) =>
  errorResponse(429, "rate.limited", message, { "Retry-After": String(retryAfterSeconds) });

/**
 * Runs a route's work; unexpected failures are logged and answered generically. A client that hung up before
 * its request was read is no failure of the host: nothing ran, and the answer goes nowhere. The REST API's
 * routes skip proxy.ts, so what it would do for them is done here: the query string is checked as the
 * proxy checks a target, and HSTS is set when the app is served over HTTPS.
 */
async function answering(request: Request, work: () => Promise<Response>): Promise<Response> {
  const requestId = requestIdFrom(request.headers);
  const url = new URL(request.url);
  const route = routeOf(url.pathname);
  const attributes = { "http.request.method": request.method, "http.route": route, "toolgate.request_id": requestId };
  const malformed = malformedTarget(url.search);
  const response = malformed
    ? errorResponse(400, "request.malformed-url", `the request target has ${malformed}`)
    : await span(`${request.method} ${route}`, attributes, (active) =>
        withLogContext({ requestId }, async () => {
          const answer = await answerSafely(request, work);
          active?.setAttribute("http.response.status_code", answer.status);
          return answer;
        }),
      );
  response.headers.set("x-request-id", requestId);
  if (servedOverHttps()) response.headers.set("Strict-Transport-Security", HSTS);
  return response;
}

async function answerSafely(request: Request, work: () => Promise<Response>): Promise<Response> {
  try {
    const response = await work();
    // The rest of a refused oversized body is still on the connection: closing it keeps the client's next
    // request from being read as the tail of this one.
    if (leftUnread(request)) response.headers.set("Connection", "close");
    return response;
  } catch (error) {
    if (request.signal.aborted)
      return errorResponse(400, "request.aborted", "the client closed the request before it was read");
    logError("api.unhandled", error, { path: new URL(request.url).pathname });
    return errorResponse(503, "host.error", "the service could not complete this request; retry later");
  }
}

/** The path with its ids (`conv_...`, `call_...`) replaced, so span names stay few. */
const routeOf = (pathname: string) =>
  pathname
    .split("/")
    .map((segment) => (/^[a-z]+_[A-Za-z0-9_-]{6,}$/.test(segment) ? "{id}" : segment))
    .join("/");

/**
 * Runs `handler` for the bearer key's agent. With `countRequest`, the key's lookup also counts the request against the
 * agent's per-minute budget, once however long the handler then takes, and a request past it is answered 429.
 */
export function withAgent(
  request: Request,
  handler: (agent: AuthenticatedAgent) => Promise<Response>,
  options: { countRequest?: boolean } = {},
): Promise<Response> {
  return answering(request, async () => {
    const authorization = request.headers.get("authorization");
    if (!options.countRequest) {
      const agent = await authenticateApiKey(authorization);
      return agent ? handler(agent) : unauthorized();
    }
    const counted = await authenticateCountedApiKey(authorization);
    if (!counted) return unauthorized();
    if (counted.retryAfterSeconds === undefined) return handler(counted.agent);
    countRequestLimited();
    return rateLimited(
      "this agent's calls and reads this minute are spent, across its keys and connections",
      counted.retryAfterSeconds,
    );
  });
}

/**
 * `withAgent` for the routes of one conversation: the key and the agent's conversation are looked up in one
 * statement. With `tokenIssuer` (the MCP route only), an OAuth access token for that issuer's resource counts too. The handler gets `found` null for a missing or another agent's conversation (it answers 404
 * after its own request checks). With `countCall` (a route that proposes a call), that statement also counts
 * the call for the rate stage; the handler gets the buckets to hand to `proposeCall`. With `orderHint` (the order id
 * the body names, read ahead), it also reads that order for the call (`found.hintedOrder`, decision 027).
 */
export function withAgentConversation(
  request: Request,
  conversationId: string | null,
  handler: (agent: AuthenticatedAgent, found: FoundConversation | null, rateCounted?: RateCount[]) => Promise<Response>,
  options: { countCall?: boolean; tokenIssuer?: string; orderHint?: () => Promise<string | null> } = {},
): Promise<Response> {
  return answering(request, async () => {
    const authorization = request.headers.get("authorization");
    // Only a request that presents a credential is read for its hint: one without is answered 401 unread.
    const orderHint = authorization !== null && options.orderHint ? await options.orderHint() : null;
    const authenticated = await authenticateForConversation(authorization, conversationId, { ...options, orderHint });
    if (authenticated) return handler(authenticated.agent, authenticated.found, authenticated.rateCounted);
    return options.tokenIssuer ? mcpUnauthorized(options.tokenIssuer, authorization !== null) : unauthorized();
  });
}

/** A value with its object keys in canonical order at every level, as the stored (jsonb) copy comes back. */
const canonical = <T>(value: T): T => JSON.parse(canonicalJson(value)) as T;

/**
 * The public shape of a call's outcome, in a fixed key order (nested objects in canonical order) so equal
 * outcomes are equal bytes, the first answer and its replays alike.
 */
export function callBody(id: string, outcome: Outcome, replayed = false): Record<string, unknown> {
  const result = outcome.result === undefined ? undefined : canonical(outcome.result);
  return {
    id,
    kind: outcome.kind,
    stage: outcome.stage,
    code: outcome.code,
    ...(outcome.issues ? { issues: outcome.issues } : {}),
    ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
    model: { ...modelProjection({ ...outcome, result }), ...waitingOn(id, outcome) },
    ...(result !== undefined ? { result } : {}),
    ...(outcome.approval ? { approval: canonical(outcome.approval) } : {}),
    ...(outcome.decision ? { decision: canonical(outcome.decision) } : {}),
    ...(outcome.awaiting ? { awaiting: outcome.awaiting } : {}),
    ...(replayed ? { replayed: true } : {}),
  };
}

export function callResponse(call: CallResult): Response {
  const status = call.outcome.code === "rate.limited" ? 429 : 200;
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  if (call.retryAfterSeconds !== undefined) headers["Retry-After"] = String(call.retryAfterSeconds);
  return Response.json(callBody(call.id, call.outcome, call.replayed), { status, headers });
}
