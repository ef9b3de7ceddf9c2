import { errorResponse, withAgent } from "@/lib/agent-api/http";
import { openConversation, OpenConversationSchema } from "@/lib/conversations";
import { db } from "@/lib/db";
import { countConversationOpen } from "@/lib/gateway/rate";
import { countConversationOpenLimited } from "@/lib/metrics";

export async function POST(request: Request): Promise<Response> {
  return withAgent(request, async (agent) => {
    const rate = await countConversationOpen(db, agent);
    if (!rate.ok) {
      countConversationOpenLimited();
      return errorResponse(429, "rate.limited", "this key opened too many conversations this minute", {
        "Retry-After": String(rate.retryAfterSeconds),
      });
    }
    const body = await request.json().catch(() => undefined);
    const input = OpenConversationSchema.safeParse(body);
    if (!input.success) {
      const paths = input.error.issues.map((issue) => issue.path.join(".") || "(body)");
      return errorResponse(400, "request.invalid", `invalid fields: ${[...new Set(paths)].join(", ")}`);
    }
    const opened = await openConversation(agent, input.data);
    if (!opened.ok)
      return errorResponse(
        opened.code === "tool.unknown" ? 400 : opened.code === "agent.not-authorized" ? 403 : 404,
        opened.code,
        opened.message,
      );
    return Response.json(opened.conversation, { status: 201 });
  });
}
