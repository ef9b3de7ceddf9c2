import { adaptPayload, envelopeBytes, FORMATS, type Format } from "@/lib/adapters";
import { callBody, callResponse, errorResponse, notFound, readBoundedBody, withAgentConversation } from "@/lib/api/http";
import { proposeCall } from "@/lib/agent-api/propose";

export async function POST(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await params;
  // The key lookup counts this request's first call for the rate stage; any further call of a batch counts itself.
  return withAgentConversation(
    request,
    id,
    async (agent, found, rateCounted) => {
      const format = (new URL(request.url).searchParams.get("format") ?? "toolgate") as Format;
      if (!FORMATS.includes(format)) return errorResponse(400, "format.unknown", `format must be one of ${FORMATS.join(", ")}`);
      if (!found) return notFound("conversation");
      const raw = await readBoundedBody(request);
      const callKey = request.headers.get("idempotency-key");
      const base = { ...found, apiKeyId: agent.apiKeyId };
      if (format === "toolgate") return callResponse(await proposeCall({ ...base, callKey, raw, rateCounted }));

      const adapted = adaptPayload(format, raw);
      // A payload no adapter can read still goes through the sequence, so its refusal is recorded like any other.
      const calls = adapted.ok ? adapted.calls.map((call) => ({ ref: call.ref, raw: envelopeBytes(call) })) : [{ ref: null, raw }];
      const results = [];
      // One call at a time, each on its own: an approval or a success of one grants nothing to the next.
      for (const [index, call] of calls.entries()) {
        const counted = index === 0 ? rateCounted : undefined;
        // Without a header key, a provider's call id keys the call; a JSON-RPC id is no call id (a retry gets a new one).
        const providerCallId = format === "mcp" ? null : call.ref;
        const result = await proposeCall({ ...base, callKey: callKey ? `${callKey}:${index}` : null, providerCallId, raw: call.raw, rateCounted: counted });
        results.push({ ref: call.ref, ...callBody(result.id, result.outcome, result.replayed) });
      }
      return Response.json({ format, results }, { headers: { "Cache-Control": "no-store" } });
    },
    { countCall: true },
  );
}
