import { callBody, notFound, withAgent } from "@/lib/api/http";
import { findAgentToolCall } from "@/lib/tool-calls";

export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return withAgent(request, async (agent) => {
    const { id } = await params;
    const call = await findAgentToolCall(agent, id);
    if (!call) return notFound("tool call");
    return Response.json(callBody(call.id, call.outcome), { headers: { "Cache-Control": "no-store" } });
  });
}
