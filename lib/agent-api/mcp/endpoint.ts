import { isLegacyRequest } from "@modelcontextprotocol/server";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { issuerOf } from "../../auth/keys/access-tokens";
import { parseJsonText, type RawProposal } from "../../gateway";
import { MAX_BATCH } from "../adapters/types";
import { mcpInsufficientScope, mcpUnauthorized } from "../http";
import { HEADER_MISMATCH, headerMismatch } from "./headers";
import { scopeToAskFor } from "./scope-challenge";
import { serveModern } from "./modern";
import { serveLegacy, type Bound } from "./server";
import { serveUnbound, type Unbound } from "./unbound";

// One endpoint, two protocol eras (decision 020). A request whose body carries the 2026-07-28 `_meta` envelope
// (a protocol version in `params._meta`) is served by the modern handler, statelessly; anything else (initialize,
// and every request of a 2025 client) by the 2025-11-25 server as before. The SDK's own predicate decides, so the
// split is the one its client expects. Both see the body only after the envelope limits (size, depth, duplicate
// keys) passed.

const rpcError = (status: number, code: number, message: string, headers?: HeadersInit) =>
  Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status, headers });

/**
 * Answers one MCP HTTP request for the bound agent and conversation, or for an OAuth connection whose person has
 * chosen no customer yet (`Unbound`: it lists the tools and answers each call with where to choose).
 */
export async function handleMcpRequest(request: Request, target: Bound | Unbound, raw: RawProposal): Promise<Response> {
  if (request.method !== "POST")
    return rpcError(405, ErrorCode.InvalidRequest, "this stateless server answers POST only", { Allow: "POST" });
  const parsed = parseJsonText(raw);
  if (!parsed.ok) return rpcError(400, ErrorCode.ParseError, parsed.outcome.code);
  // Every call of a batch is proposed and recorded, a rate-limited one too, so a batch holds no more calls than a
  // provider's payload may (lib/agent-api/adapters): not the SDK's 100 rows of the log per request.
  if (Array.isArray(parsed.value) && parsed.value.length > MAX_BATCH)
    return rpcError(400, ErrorCode.InvalidRequest, `a JSON-RPC batch holds at most ${MAX_BATCH} messages`);
  if ("conversation" in target) {
    const ask = scopeToAskFor(target, parsed.value);
    if (ask) return mcpInsufficientScope(issuerOf(request), ask.scopes, ask.tool);
  }
  const modern = !(await isLegacyRequest(request, parsed.value));
  if (!modern) {
    const mismatch = headerMismatch(request.headers, parsed.value);
    if (mismatch) return rpcError(400, HEADER_MISMATCH, mismatch);
  }
  if (!("conversation" in target)) return serveUnbound(request, target, parsed.value, modern);
  // A wait (get_call_status, tasks/result) asks for the credential again; one revoked meanwhile gets the route's 401,
  // as any request with a revoked credential does, and nothing of the request's calls.
  const credential = { revoked: false };
  const response = modern
    ? await serveModern(request, target, parsed.value, credential)
    : await serveLegacy(request, target, parsed.value, credential);
  return credential.revoked ? mcpUnauthorized(issuerOf(request), true) : response;
}
