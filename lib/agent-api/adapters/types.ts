import type { Outcome } from "../../outcome";

/** One tool call found in a provider's payload, as the raw envelope text stage 2 will parse. */
export interface AdaptedCall {
  /** The provider's own id for the call (tool_call id, call_id, tool_use id, JSON-RPC id), echoed back only. */
  ref: string | null;
  envelope: string;
}

export type AdapterResult = { ok: true; calls: AdaptedCall[] } | { ok: false; outcome: Outcome };

export const MAX_BATCH = 16;
