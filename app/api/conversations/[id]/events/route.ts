import { currentUser } from "@/lib/auth/auth";
import { db } from "@/lib/db";
import { subscribe } from "@/lib/live";

export const dynamic = "force-dynamic";

const POLL_MS = 3000;

/**
 * Server-sent events for a support agent's conversation page: a "calls" event whenever a call of the
 * conversation is added or changes (a supervisor decides, an approval expires). Pushed by PostgreSQL
 * NOTIFY; a slow poll of the latest change time covers a lost LISTEN connection.
 */
export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const user = await currentUser();
  if (!user || user.role !== "AGENT") return new Response("sign in as the conversation's agent", { status: 401 });
  const { id } = await params;
  const owned = await db.conversation.findFirst({ where: { id, agentId: user.id, tenantId: user.tenantId }, select: { id: true } });
  if (!owned) return new Response("not found", { status: 404 });

  const encoder = new TextEncoder();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let last = "";
      let closed = false;
      const send = (event: string, data: string) => {
        if (!closed) controller.enqueue(encoder.encode(`event: ${event}\ndata: ${data}\n\n`));
      };
      const check = async () => {
        const latest = await db.toolCall.aggregate({ where: { conversationId: id }, _max: { updatedAt: true }, _count: true });
        const stamp = `${latest._count}:${latest._max.updatedAt?.toISOString() ?? ""}`;
        if (stamp !== last) {
          last = stamp;
          send("calls", JSON.stringify({ stamp }));
        }
      };
      const safeCheck = () => void check().catch(() => undefined);
      const unsubscribe = subscribe(id, safeCheck);
      const timer = setInterval(safeCheck, POLL_MS);
      const heartbeat = setInterval(() => send("ping", "{}"), 15_000);
      safeCheck();
      cleanup = () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        clearInterval(timer);
        clearInterval(heartbeat);
        controller.close();
      };
      request.signal.addEventListener("abort", () => cleanup());
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(stream, {
    headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-store, no-transform", Connection: "keep-alive", "X-Accel-Buffering": "no" },
  });
}
