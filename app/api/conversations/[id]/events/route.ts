import { currentStreamUser } from "@/lib/auth/auth";
import { isAgentConversation, latestCallChange } from "@/lib/conversations/sql";
import { db } from "@/lib/db";
import { logError } from "@/lib/log";
import { subscribe, watchConversation, type Watch } from "@/lib/live";
import { onDrain } from "@/lib/shutdown";
import { isWellFormedId } from "@/lib/security/input";

export const dynamic = "force-dynamic";

const POLL_MS = 3000;

/**
 * Server-sent events for a support agent's conversation page: a "calls" event whenever a call of the
 * conversation is added or changes (a supervisor decides, an approval expires). Pushed by PostgreSQL
 * NOTIFY while the stream's watch is open; a slow poll of the latest change time covers a lost LISTEN
 * connection and a change committed while the watch was being opened.
 */
export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const signedIn = await currentStreamUser();
  if (!signedIn || signedIn.user.role !== "AGENT")
    return new Response("sign in as the conversation's agent", { status: 401 });
  const { user, stillLive } = signedIn;
  const { id } = await params;
  if (!isWellFormedId(id)) return new Response("not found", { status: 404 });
  if (!(await isAgentConversation(db, { userId: user.id, tenantId: user.tenantId }, id)))
    return new Response("not found", { status: 404 });

  const encoder = new TextEncoder();
  let cleanup: (close?: boolean) => void = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let last = "";
      let closed = false;
      const send = (event: string, data: string) => {
        if (!closed) controller.enqueue(encoder.encode(`event: ${event}\ndata: ${data}\n\n`));
      };
      // `via` says what noticed the change: a NOTIFY ("push") always sends; the poll sends only what is new.
      const check = async (via: "push" | "poll") => {
        const latest = await latestCallChange(db, id);
        const stamp = `${latest.count}:${latest.updatedAt?.toISOString() ?? ""}`;
        if (stamp !== last || via === "push") {
          last = stamp;
          send("calls", JSON.stringify({ stamp, via }));
        }
      };
      const safeCheck = (via: "push" | "poll") => void check(via).catch(() => undefined);
      const unsubscribe = subscribe(id, () => safeCheck("push"));
      // Refreshed and ended only after it was opened, however early the stream closes. Without a watch the
      // view still polls: slower, never wrong.
      const failed = (error: unknown) => logError("live.watch-failed", error, { conversationId: id });
      const watching = watchConversation(id).catch((error) => {
        failed(error);
        return null;
      });
      const onWatch = (step: (watch: Watch) => Promise<void>) =>
        void watching.then((watch) => watch && step(watch)).catch(failed);
      // A session ended (sign-out, an admin) or lapsed closes the stream at the next poll.
      const poll = async () => ((await stillLive()) ? check("poll") : cleanup());
      const timer = setInterval(() => void poll().catch(() => undefined), POLL_MS);
      const heartbeat = setInterval(() => {
        send("ping", "{}");
        onWatch((watch) => watch.refresh());
      }, 15_000);
      safeCheck("poll");
      // A draining instance ends the stream; the browser's EventSource reconnects, through the load balancer, to another.
      const stopDraining = onDrain(() => cleanup());
      cleanup = (close = true) => {
        if (closed) return;
        closed = true;
        stopDraining();
        unsubscribe();
        clearInterval(timer);
        clearInterval(heartbeat);
        onWatch((watch) => watch.end());
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
