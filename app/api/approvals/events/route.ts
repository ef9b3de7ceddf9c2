import { queueStamp } from "@/lib/approvals/queue";
import { currentStreamUser } from "@/lib/auth/auth";
import { logError } from "@/lib/log";

export const dynamic = "force-dynamic";

const POLL_MS = 2000;

/**
 * Server-sent events for the supervisors' queue: a "queue" event with the pending count and the queue's stamp
 * whenever a request arrives, is decided, expires or gets its first of two approvals. One indexed count per stream every
 * two seconds, after checking the session is still live: the stream closes within two seconds of its end.
 */
export async function GET(request: Request): Promise<Response> {
  const signedIn = await currentStreamUser();
  if (!signedIn || signedIn.user.role !== "SUPERVISOR") return new Response("sign in as a supervisor", { status: 401 });
  const { user, stillLive } = signedIn;
  const encoder = new TextEncoder();
  let cleanup: (close?: boolean) => void = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let last = "";
      let closed = false;
      const check = async () => {
        // A session ended (sign-out, an admin) or lapsed closes the stream at the next poll.
        if (!(await stillLive())) return cleanup();
        const { pending, stamp } = await queueStamp(user.tenantId);
        if (closed || stamp === last) return;
        last = stamp;
        controller.enqueue(encoder.encode(`event: queue\ndata: ${JSON.stringify({ pending, stamp })}\n\n`));
      };
      const safeCheck = () =>
        void check().catch((error) => logError("approvals.live-failed", error, { tenantId: user.tenantId }));
      const timer = setInterval(safeCheck, POLL_MS);
      safeCheck();
      cleanup = (close = true) => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        // A reader that cancelled has closed the stream already.
        if (close) controller.close();
      };
      request.signal.addEventListener("abort", () => cleanup());
    },
    cancel() {
      cleanup(false);
    },
  });
  return new Response(stream, {
    headers: {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-store, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    },
  });
}
