import { outcome } from "../../outcome";
import { isPlainObject } from "../../canonical";
import { parseJsonText, type RawProposal } from "../../gateway";
import { MAX_BATCH, type AdaptedCall, type AdapterResult } from "./types";

// Provider payloads become toolgate envelopes here, at the edge, before stage 2. Only the tool's name and its
// arguments cross over; every vendor field (ids, types, strict flags, cache hints) stays behind. The
// provider's raw text gets the same byte, depth and duplicate-key limits as an envelope, and an arguments
// string (OpenAI) is passed on as the raw text it is, so stage 2 checks it again.

export const FORMATS = ["toolgate", "openai-chat", "openai-responses", "anthropic", "mcp"] as const;
export type Format = (typeof FORMATS)[number];

const envelopeText = (name: unknown, argumentsText: string) =>
  `{"name":${JSON.stringify(name)},"arguments":${argumentsText}}`;
const refOf = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : null);
const invalid = (): AdapterResult => ({ ok: false, outcome: outcome("parse.envelope-invalid") });

function collect(items: unknown[], pick: (item: Record<string, unknown>) => AdaptedCall | null): AdapterResult {
  const calls = items
    .filter(isPlainObject)
    .map(pick)
    .filter((call): call is AdaptedCall => call !== null);
  if (calls.length === 0 || calls.length > MAX_BATCH) return invalid();
  return { ok: true, calls };
}

/** OpenAI Chat Completions: a message's `tool_calls`, each `{function: {name, arguments: "<json text>"}}`. */
function openaiChat(payload: Record<string, unknown>): AdapterResult {
  const list = Array.isArray(payload.tool_calls) ? payload.tool_calls : null;
  if (!list) return invalid();
  return collect(list, (call) => {
    const fn = call.function;
    if (!isPlainObject(fn) || typeof fn.arguments !== "string")
      return { ref: refOf(call.id), envelope: envelopeText(isPlainObject(fn) ? fn.name : null, "null") };
    return { ref: refOf(call.id), envelope: envelopeText(fn.name, fn.arguments) };
  });
}

/** OpenAI Responses: `function_call` items of `output`, each `{name, arguments: "<json text>", call_id}`. */
function openaiResponses(payload: Record<string, unknown>): AdapterResult {
  const list = Array.isArray(payload.output) ? payload.output : null;
  if (!list) return invalid();
  return collect(
    list.filter((item) => isPlainObject(item) && item.type === "function_call"),
    (item) => ({
      ref: refOf(item.call_id),
      envelope: envelopeText(item.name, typeof item.arguments === "string" ? item.arguments : "null"),
    }),
  );
}

/** Anthropic Messages: `tool_use` blocks of `content`, each `{id, name, input: {...}}`. */
function anthropic(payload: Record<string, unknown>): AdapterResult {
  const list = Array.isArray(payload.content) ? payload.content : null;
  if (!list) return invalid();
  return collect(
    list.filter((block) => isPlainObject(block) && block.type === "tool_use"),
    (block) => ({ ref: refOf(block.id), envelope: envelopeText(block.name, JSON.stringify(block.input ?? null)) }),
  );
}

/** MCP `tools/call` JSON-RPC requests (one, or a batch array): `{method: "tools/call", params: {name, arguments}}`. */
function mcp(payload: unknown): AdapterResult {
  const list = Array.isArray(payload) ? payload : [payload];
  return collect(
    list.filter((message) => isPlainObject(message) && message.method === "tools/call"),
    (message) => {
      const params = isPlainObject(message.params) ? message.params : {};
      return { ref: refOf(message.id), envelope: envelopeText(params.name, JSON.stringify(params.arguments ?? null)) };
    },
  );
}

/** Turns a request body of the given format into envelopes for the pipeline; toolgate's own format passes through. */
export function adaptPayload(format: Exclude<Format, "toolgate">, raw: RawProposal): AdapterResult {
  // The same limits as stage 2, applied to the provider's text before anything is taken out of it.
  const parsed = parseJsonText(raw);
  if (!parsed.ok) return parsed;
  const payload = parsed.value;
  if (format === "mcp") return mcp(payload);
  if (!isPlainObject(payload)) return invalid();
  if (format === "openai-chat") return openaiChat(payload);
  if (format === "openai-responses") return openaiResponses(payload);
  return anthropic(payload);
}

export const envelopeBytes = (call: AdaptedCall): RawProposal => ({
  bytes: new TextEncoder().encode(call.envelope),
  truncated: false,
});
