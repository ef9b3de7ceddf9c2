import { queueStamp } from "@/lib/approvals/desk/queue";
import { currentStreamUser } from "@/lib/auth/sign-in/auth";
import { eventStream } from "@/lib/instance/event-stream";

export const dynamic = "force-dynamic";

/**
 * Server-sent events for the supervisors' queue: a "queue" event with the pending count and the queue's stamp
 * whenever a request arrives, is decided, expires or gets its first of two approvals. One indexed count per stream
 * every two seconds, after checking the session is still live: the stream closes within two seconds of its end.
 */
export async function GET(request: Request): Promise<Response> {
  const signedIn = await currentStreamUser();
  if (!signedIn || signedIn.user.role !== "SUPERVISOR") return new Response("sign in as a supervisor", { status: 401 });
  const { user, stillLive } = signedIn;
  return eventStream(request, {
    pollMs: 2000,
    stillLive,
    failure: { event: "approvals.live-failed", fields: { tenantId: user.tenantId } },
    start: (send) => {
      let last = "";
      return {
        poll: async () => {
          const { pending, stamp } = await queueStamp(user.tenantId);
          if (stamp === last) return;
          last = stamp;
          send("queue", { pending, stamp });
        },
      };
    },
  });
}
