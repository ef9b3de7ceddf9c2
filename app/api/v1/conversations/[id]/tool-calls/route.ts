import { MAX_ENVELOPE_BYTES, orderHintOf } from "@/lib/gateway";
import { FORMATS, type Format } from "@/lib/agent-api/adapters/adapt";
import { proposeBatch } from "@/lib/agent-api/batch";
import { callResponse, notFound, unauthorized, withAgentConversation } from "@/lib/agent-api/http";
import { errorResponse, readBoundedBody, type BoundedBody } from "@/lib/http";
import { proposeCall } from "@/lib/agent-api/propose";

export async function POST(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await params;
  let read: BoundedBody | undefined;
  const body = async () => (read ??= await readBoundedBody(request, MAX_ENVELOPE_BYTES));
  const format = (new URL(request.url).searchParams.get("format") ?? "toolgate") as Format;
  // The key lookup counts this request's first call for the rate stage (lib/agent-api/batch.ts says how the rest count).
  return withAgentConversation(
    request,
    id,
    async (agent, found, rateCounted) => {
      if (!FORMATS.includes(format))
        return errorResponse(400, "format.unknown", `format must be one of ${FORMATS.join(", ")}`);
      if (!found) return notFound("conversation");
      const raw = await body();
      const callKey = request.headers.get("idempotency-key");
      const base = { ...found, apiKeyId: agent.apiKeyId };
      // "revoked": the key was revoked while a call waited (get_call_status), answered as any revoked key.
      if (format === "toolgate") {
        const call = await proposeCall({ ...base, callKey, raw, rateCounted });
        return call === "revoked" ? unauthorized() : callResponse(call);
      }
      const batch = await proposeBatch(format, base, raw, callKey, rateCounted);
      if (batch === "revoked") return unauthorized();
      return Response.json(batch, { headers: { "Cache-Control": "no-store" } });
    },
    // The key lookup also reads the order the body names, so a read costs no statement of its own (decision 027).
    // Only an envelope names one: a provider's payload has no `arguments` of its own, and a read later in its batch
    // must not be answered from the order as it was before the batch's earlier calls.
    { countCall: true, ...(format === "toolgate" ? { orderHint: async () => orderHintOf(await body()) } : {}) },
  );
}
