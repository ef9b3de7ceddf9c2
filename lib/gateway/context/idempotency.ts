import { sha256Hex } from "../../canonical";
import type { ToolDefinition } from "../../tools/types";
import { pass, stop, type Outcome, type StageResult } from "../../outcome";

const CALL_KEY = /^[\x21-\x7e]{1,200}$/;

/** Where a write's call key can come from, strongest first. */
export interface CallKeySource {
  /** The client's own key (`Idempotency-Key` header, MCP `_meta`): always wins, even when malformed. */
  explicit: string | null;
  /** The model provider's id for this tool call (OpenAI `call_id`/`id`, Anthropic `tool_use.id`). */
  providerCallId?: string | null;
}

/**
 * The key stage 8 deduplicates a write by: the client's key; else the provider's call id; else the call's content
 * (its canonical arguments), so an identical retry replays the first outcome. Keys are scoped to (conversation,
 * tool), so neither derived key needs more than that; a deliberate identical second write needs its own key.
 */
export function deriveCallKey(source: CallKeySource, argsHash: string): string {
  if (source.explicit !== null) return source.explicit;
  if (source.providerCallId) return `provider-call:${sha256Hex(source.providerCallId).slice(0, 40)}`;
  return `content:${argsHash}`;
}

export interface StoredCall {
  id: string;
  outcome: Outcome;
}

/** Whether `callKey` is a well-formed key (printable ASCII, 1 to 200 characters). */
export const isCallKey = (callKey: string) => CALL_KEY.test(callKey);

/**
 * Stage 8: writes need a call key (see `deriveCallKey`), scoped to (conversation, tool). The same key with the same canonical
 * arguments hands back the stored call for a replay; with other arguments it is refused. `stored` is the call under
 * this key, read by stage 7 under the conversation's row lock, so two requests with one key cannot both pass.
 */
export function checkIdempotency(
  tool: ToolDefinition,
  callKey: string,
  argsHash: string,
  stored: (StoredCall & { argsHash: string | null }) | null,
): StageResult<{ replay: StoredCall | null }> {
  if (tool.effect === "read") return pass({ replay: null });
  if (!isCallKey(callKey)) return stop("call-key.missing");
  if (!stored) return pass({ replay: null });
  if (stored.argsHash !== argsHash) return stop("call-key.reused");
  return pass({ replay: { id: stored.id, outcome: stored.outcome } });
}
