import { adaptPayload, envelopeBytes, type Format } from "./adapters/adapt";
import { callBody } from "./http";
import { proposeCall } from "./propose";
import type { Proposal, RateCount, RawProposal } from "../gateway";

/**
 * A provider's payload (OpenAI, Anthropic, MCP) with one or more tool calls, each proposed on its own: an approval or
 * a success of one grants nothing to the next. The batch rules: a header key becomes `<key>:<index>` per call;
 * without one, a provider's call id keys the call (a JSON-RPC id is no call id: a retry gets a new one); the
 * request's first call carries the rate count the key lookup made, every further call counts itself. A key revoked
 * while a call of the batch waited stops it: `revoked`, nothing of its calls.
 */
export async function proposeBatch(
  format: Exclude<Format, "toolgate">,
  base: Omit<Proposal, "callKey" | "providerCallId" | "raw" | "rateCounted">,
  raw: RawProposal,
  callKey: string | null,
  rateCounted: RateCount[] | undefined,
): Promise<{ format: Format; results: Record<string, unknown>[] } | "revoked"> {
  const adapted = adaptPayload(format, raw);
  // A payload no adapter can read still goes through the sequence, so its refusal is recorded like any other.
  const calls = adapted.ok
    ? adapted.calls.map((call) => ({ ref: call.ref, raw: envelopeBytes(call) }))
    : [{ ref: null, raw }];
  const results = [];
  for (const [index, call] of calls.entries()) {
    const result = await proposeCall({
      ...base,
      callKey: callKey ? `${callKey}:${index}` : null,
      providerCallId: format === "mcp" ? null : call.ref,
      raw: call.raw,
      rateCounted: index === 0 ? rateCounted : undefined,
    });
    if (result === "revoked") return result;
    results.push({ ref: call.ref, ...callBody(result.id, result.outcome, result.replayed) });
  }
  return { format, results };
}
