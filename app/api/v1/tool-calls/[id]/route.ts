import { callBody, notFound, unauthorized, withAgent } from "@/lib/agent-api/http";
import { errorResponse } from "@/lib/http";
import { MAX_WAIT_SECONDS, readAgentToolCall } from "@/lib/agent-api/tool-calls";

/**
 * `?wait=N` (0..60 seconds): answer as soon as the call is decided, or after N seconds with its outcome then; a key
 * revoked while it waited is answered as any revoked key. Each request spends one of the agent's per-minute budget,
 * counted by the key lookup, however long it waits.
 */
export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return withAgent(
    request,
    async (agent) => {
      const { id } = await params;
      const wait = new URL(request.url).searchParams.get("wait");
      const seconds = wait === null ? 0 : /^[0-9]{1,2}$/.test(wait) ? Number(wait) : Number.NaN;
      if (!(seconds <= MAX_WAIT_SECONDS)) {
        return errorResponse(400, "wait.invalid", `wait is a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
      }
      const call = await readAgentToolCall(agent, id, seconds, request.signal);
      if (call === "revoked") return unauthorized();
      if (!call) return notFound("tool call");
      return Response.json(callBody(call.id, call.outcome), { headers: { "Cache-Control": "no-store" } });
    },
    { countRequest: true },
  );
}
