import { callResponse, notFound, readBoundedBody, withAgent } from "@/lib/api/http";
import { findAgentConversation } from "@/lib/conversations";
import { proposeToolCall } from "@/lib/gateway/pipeline";

export async function POST(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return withAgent(request, async (agent) => {
    const { id } = await params;
    const found = await findAgentConversation(agent, id);
    if (!found) return notFound("conversation");
    const raw = await readBoundedBody(request);
    const call = await proposeToolCall({
      ...found,
      apiKeyId: agent.apiKeyId,
      callKey: request.headers.get("idempotency-key"),
      raw,
    });
    return callResponse(call);
  });
}
