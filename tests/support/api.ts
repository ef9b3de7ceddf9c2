import { POST as openConversationRoute } from "@/app/api/v1/conversations/route";
import { POST as proposeRoute } from "@/app/api/v1/conversations/[id]/tool-calls/route";
import { GET as toolsRoute } from "@/app/api/v1/conversations/[id]/tools/route";
import { GET as toolCallRoute } from "@/app/api/v1/tool-calls/[id]/route";

// Calls the real route handlers with real Request objects: the same code `next start` serves.

const BASE = "http://toolgate.test/api/v1";

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
}

async function read<T>(response: Response): Promise<ApiResponse<T>> {
  const text = await response.text();
  let json: T;
  try {
    json = JSON.parse(text) as T;
  } catch {
    json = {} as T;
  }
  return { status: response.status, headers: response.headers, text, json };
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const params = (id: string) => ({ params: Promise.resolve({ id }) });

export async function openConversation(key: string, body: unknown) {
  const request = new Request(`${BASE}/conversations`, {
    method: "POST",
    headers: { ...auth(key), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return read<{ id: string; tools: string[]; scopes: string[] }>(await openConversationRoute(request));
}

export async function conversationFor(key: string, body: unknown): Promise<string> {
  const opened = await openConversation(key, body);
  if (opened.status !== 201) throw new Error(`could not open conversation: ${opened.status} ${opened.text}`);
  return opened.json.id;
}

export interface CallBody {
  id: string;
  kind: string;
  stage: string;
  code: string;
  issues?: { path: string; problem: string }[];
  model: { status: string; paths?: string[]; result?: unknown; message?: string; reason?: string };
  result?: Record<string, unknown>;
  approval?: { id: string; expires_at: string; preview: Record<string, any> };
  replayed?: boolean;
}

/** `body` is sent as is when it is a string (raw envelope text), else as JSON. */
export async function propose(key: string, conversationId: string, body: unknown, callKey?: string) {
  const headers: Record<string, string> = { ...auth(key), "content-type": "application/json" };
  if (callKey !== undefined) headers["idempotency-key"] = callKey;
  const request = new Request(`${BASE}/conversations/${conversationId}/tool-calls`, {
    method: "POST",
    headers,
    body:
      typeof body === "string"
        ? body
        : body instanceof Uint8Array
          ? new Blob([new Uint8Array(body)])
          : JSON.stringify(body),
  });
  return read<CallBody>(await proposeRoute(request, params(conversationId)));
}

export async function getToolCall(key: string, id: string, query = "", signal?: AbortSignal) {
  const request = new Request(`${BASE}/tool-calls/${id}${query}`, { headers: auth(key), signal });
  return read<CallBody>(await toolCallRoute(request, params(id)));
}

export async function getTools(key: string, conversationId: string) {
  const request = new Request(`${BASE}/conversations/${conversationId}/tools`, { headers: auth(key) });
  return read<{ tools: { name: string; description: string; input_schema: Record<string, unknown> }[] }>(
    await toolsRoute(request, params(conversationId)),
  );
}

let keyCounter = 0;
export const newCallKey = () => `key-${Date.now()}-${keyCounter++}`;

export interface BatchBody {
  format: string;
  results: (CallBody & { ref: string | null })[];
}

/** A provider-shaped payload (`format`), sent as is. */
export async function proposeAs(key: string, conversationId: string, format: string, body: unknown, callKey?: string) {
  const headers: Record<string, string> = { ...auth(key), "content-type": "application/json" };
  if (callKey !== undefined) headers["idempotency-key"] = callKey;
  const request = new Request(`${BASE}/conversations/${conversationId}/tool-calls?format=${format}`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return read<BatchBody>(await proposeRoute(request, params(conversationId)));
}

export async function getToolsAs(key: string, conversationId: string, format: string) {
  const request = new Request(`${BASE}/conversations/${conversationId}/tools?format=${format}`, { headers: auth(key) });
  return read<{ tools: Record<string, any>[] }>(await toolsRoute(request, params(conversationId)));
}
