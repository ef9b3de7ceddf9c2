import { notFound, withAgent } from "@/lib/api/http";
import { findAgentConversation } from "@/lib/conversations";
import { findTool, modelDefinition } from "@/lib/tools/registry";

export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return withAgent(request, async (agent) => {
    const { id } = await params;
    const found = await findAgentConversation(agent, id);
    if (!found) return notFound("conversation");
    const tools = found.conversation.tools.flatMap((name) => {
      const tool = findTool(name);
      return tool ? [modelDefinition(tool)] : [];
    });
    return Response.json({ tools });
  });
}
