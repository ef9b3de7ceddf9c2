import { notFound, withAgentConversation } from "@/lib/agent-api/http";
import { errorResponse } from "@/lib/http";
import { DEFINITION_FORMATS, exposedTools, providerDefinition, type DefinitionFormat } from "@/lib/tools/registry";
import { upstreamDefinitions } from "@/lib/upstream/calls/exposure";

export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await params;
  return withAgentConversation(request, id, async (_agent, found) => {
    const format = (new URL(request.url).searchParams.get("format") ?? "toolgate") as DefinitionFormat;
    if (!DEFINITION_FORMATS.includes(format))
      return errorResponse(400, "format.unknown", `format must be one of ${DEFINITION_FORMATS.join(", ")}`);
    if (!found) return notFound("conversation");
    const tools = [
      ...exposedTools(found.conversation.tools).map((tool) => providerDefinition(tool, format)),
      ...(await upstreamDefinitions(found.conversation, format)),
    ];
    return Response.json({ tools });
  });
}
