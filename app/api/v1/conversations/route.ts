import { rateLimited, withAgent } from "@/lib/agent-api/http";
import { errorResponse, readBoundedBody } from "@/lib/http";
import { openConversation, OpenConversationSchema } from "@/lib/conversations/open";
import { countConversationOpen } from "@/lib/gateway";
import { countConversationOpenLimited } from "@/lib/observe/metrics";

// Far above any real request (a customer, an order, a few tool names); read no further than this.
const MAX_OPEN_BYTES = 16 * 1024;

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}

export async function POST(request: Request): Promise<Response> {
  return withAgent(request, async (agent) => {
    const rate = await countConversationOpen(agent);
    if (!rate.ok) {
      countConversationOpenLimited();
      return rateLimited(
        "this agent opened too many conversations this minute, across its keys and connections",
        rate.retryAfterSeconds,
      );
    }
    const raw = await readBoundedBody(request, MAX_OPEN_BYTES);
    if (raw.truncated)
      return errorResponse(413, "request.too-large", `the body is larger than ${MAX_OPEN_BYTES} bytes`);
    const input = OpenConversationSchema.safeParse(parseJson(raw.bytes));
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
