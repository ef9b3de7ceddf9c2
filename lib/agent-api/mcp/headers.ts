// The Mcp-Method and Mcp-Name request headers (Streamable HTTP, revision 2026-07-28) mirror the body so that a
// proxy can route on them; a server that reads the body must refuse a request whose headers say otherwise. For
// 2026-07-28 the SDK checks them (and requires them); for an earlier revision they are optional, and this checks
// the ones a client sends, so no request reaches a tool under another name than a proxy saw.

/** The spec's code for headers that disagree with the body (HeaderMismatch). */
export const HEADER_MISMATCH = -32020;

// Tool and prompt names, resource URIs and task ids may travel Base64-encoded: `=?base64?…?=`.
const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

function decoded(value: string): string | null {
  const match = SENTINEL.exec(value);
  if (!match) return value;
  const text = Buffer.from(match[1], "base64").toString("utf8");
  return Buffer.from(text, "utf8").toString("base64") === match[1] ? text : null;
}

/** Where Mcp-Name comes from in the body, by method. */
function nameOf(method: string, params: Record<string, unknown> | undefined): unknown {
  if (method === "resources/read") return params?.uri;
  if (method.startsWith("tasks/")) return params?.taskId;
  return params?.name;
}

/** Why the request's Mcp-Method / Mcp-Name headers disagree with its body, or null when they agree or are absent. */
export function headerMismatch(headers: Headers, body: unknown): string | null {
  const method = headers.get("mcp-method");
  const name = headers.get("mcp-name");
  if (method === null && name === null) return null;
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return "Mcp-Method and Mcp-Name describe one request; send one JSON-RPC request per POST with them";
  const message = body as { method?: unknown; params?: Record<string, unknown> };
  if (method !== null && method !== message.method)
    return `Header mismatch: Mcp-Method header value '${method.slice(0, 64)}' does not match body value '${String(message.method).slice(0, 64)}'`;
  if (name === null) return null;
  const value = decoded(name);
  if (value === null) return "Header mismatch: Mcp-Name is not valid Base64 inside =?base64?…?=";
  const bodyName = nameOf(String(message.method), message.params);
  return value === bodyName
    ? null
    : `Header mismatch: Mcp-Name header value '${value.slice(0, 64)}' does not match body value '${String(bodyName).slice(0, 64)}'`;
}
