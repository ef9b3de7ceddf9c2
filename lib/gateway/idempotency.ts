import { sha256Hex } from "../canonical";
import type { Db } from "../db";
import type { ToolDefinition } from "../tools/types";
import { pass, stop, type Outcome, type StageResult } from "../outcome";
import { findCallByKey } from "./sql";

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

/**
 * Stage 8: writes need a call key (see `deriveCallKey`), scoped to (conversation, tool). The same key with the same canonical
 * arguments hands back the stored call for a replay; with other arguments it is refused.
 * Runs under the conversation's row lock, so two requests with one key cannot both pass.
 */
export async function checkIdempotency(
  client: Db,
  tool: ToolDefinition,
  conversationId: string,
  callKey: string,
  argsHash: string,
): Promise<StageResult<{ replay: StoredCall | null }>> {
  if (tool.effect === "read") return pass({ replay: null });
  if (!CALL_KEY.test(callKey)) return stop("call-key.missing");
  const stored = await findCallByKey(client, { conversationId, toolName: tool.name, callKey });
  if (!stored) return pass({ replay: null });
  if (stored.argsHash !== argsHash) return stop("call-key.reused");
  return pass({ replay: { id: stored.id, outcome: stored.outcome as unknown as Outcome } });
}
