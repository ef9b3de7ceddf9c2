import { currentStreamUser } from "@/lib/auth/sign-in/auth";
import { callsStamp, isOwnConversation } from "@/lib/conversations/console";
import { eventStream } from "@/lib/instance/event-stream";
import { subscribe, watchConversation, type Watch } from "@/lib/live";

export const dynamic = "force-dynamic";

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
  if (!(await isOwnConversation({ userId: user.id, tenantId: user.tenantId }, id)))
    return new Response("not found", { status: 404 });

  return eventStream(request, {
    pollMs: 3000,
    stillLive,
    failure: { event: "live.watch-failed", fields: { conversationId: id } },
    start: (send, failed) => {
      let last = "";
      // `via` says what noticed the change: a NOTIFY ("push") always sends; the poll sends only what is new.
      const check = async (via: "push" | "poll") => {
        const stamp = await callsStamp(id);
        if (stamp !== last || via === "push") {
          last = stamp;
          send("calls", { stamp, via });
        }
      };
      const unsubscribe = subscribe(id, () => void check("push").catch(failed));
      // Refreshed and ended only after it was opened, however early the stream closes. Without a watch the
      // view still polls: slower, never wrong.
      const watching = watchConversation(id).catch((error) => {
        failed(error);
        return null;
      });
      const onWatch = (step: (watch: Watch) => Promise<void>) =>
        void watching.then((watch) => watch && step(watch)).catch(failed);
      return {
        poll: () => check("poll"),
        heartbeat: () => onWatch((watch) => watch.refresh()),
        stop: () => {
          unsubscribe();
          onWatch((watch) => watch.end());
        },
      };
    },
  });
}
