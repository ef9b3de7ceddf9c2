import type { Sql } from "../db";
import type { ToolDefinition } from "../tools/types";
import { pass, stop, type Outcome, type StageResult } from "./outcome";

const CALL_KEY = /^[\x21-\x7e]{1,200}$/;

export interface StoredCall {
  id: string;
  outcome: Outcome;
}

/**
 * Stage 8: writes need a call key, scoped to (conversation, tool). The same key with the same canonical
 * arguments hands back the stored call for a replay; with other arguments it is refused.
 * Runs under the conversation's row lock, so two requests with one key cannot both pass.
 */
export async function checkIdempotency(
  client: Sql,
  tool: ToolDefinition,
  conversationId: string,
  callKey: string | null,
  argsHash: string,
): Promise<StageResult<{ replay: StoredCall | null }>> {
  if (tool.effect === "read") return pass({ replay: null });
  if (callKey === null || !CALL_KEY.test(callKey)) return stop("call-key.missing");
  const [stored] = await client.$queryRaw<{ id: string; argsHash: string | null; outcome: unknown }[]>`
    SELECT "id", "argsHash", "outcome" FROM "ToolCall"
    WHERE "conversationId" = ${conversationId} AND "toolName" = ${tool.name} AND "callKey" = ${callKey}`;
  if (!stored) return pass({ replay: null });
  if (stored.argsHash !== argsHash) return stop("call-key.reused");
  return pass({ replay: { id: stored.id, outcome: stored.outcome as unknown as Outcome } });
}
