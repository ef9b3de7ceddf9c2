import { logError } from "../observe/log";
import { onDrain } from "./shutdown";

/** Sends one server-sent event with `data` as JSON; nothing once the stream has closed. */
export type SendEvent = (event: string, data: unknown) => void;

/** What a live view streams: `poll` sends what changed since it last looked; push sources start with the feed. */
export interface Feed {
  poll(): Promise<void>;
  /** Every heartbeat, while the stream is open (a watch kept alive). */
  heartbeat?(): void;
  /** When the stream closes, however early. */
  stop?(): void;
}

export interface EventStreamOptions {
  /** Milliseconds between polls; each poll first checks the session is still live. */
  pollMs: number;
  /** The session of the person streaming: false once it ended (sign-out, an admin) or lapsed. */
  stillLive: () => Promise<boolean>;
  /** Logged when a poll or a push fails: the event's name and what identifies the stream. */
  failure: { event: string; fields: Record<string, unknown> };
  start(send: SendEvent, failed: (error: unknown) => void): Feed;
}

const HEARTBEAT_MS = 15_000;

const SSE_HEADERS = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-store, no-transform",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
};

/**
 * The one server side of a live view: a text/event-stream answer that polls its feed (after re-checking the
 * session each time), sends a heartbeat, and closes when the session ends, the browser leaves or the instance
 * drains (the browser's EventSource then reconnects, through the load balancer, to another).
 */
export function eventStream(request: Request, options: EventStreamOptions): Response {
  const encoder = new TextEncoder();
  let cleanup: (close?: boolean) => void = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      const send: SendEvent = (event, data) => {
        if (!closed) controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      };
      const failed = (error: unknown) => logError(options.failure.event, error, options.failure.fields);
      const feed = options.start(send, failed);
      // A session ended (sign-out, an admin) or lapsed closes the stream at the next poll.
      const poll = async () => ((await options.stillLive()) ? feed.poll() : cleanup());
      const timer = setInterval(() => void poll().catch(failed), options.pollMs);
      const heartbeat = setInterval(() => {
        send("ping", {});
        feed.heartbeat?.();
      }, HEARTBEAT_MS);
      void feed.poll().catch(failed);
      const stopDraining = onDrain(() => cleanup());
      cleanup = (close = true) => {
        if (closed) return;
        closed = true;
        stopDraining();
        clearInterval(timer);
        clearInterval(heartbeat);
        feed.stop?.();
        // A reader that cancelled has closed the stream already.
        if (close) controller.close();
      };
      request.signal.addEventListener("abort", () => cleanup());
    },
    cancel() {
      cleanup(false);
    },
  });
  return new Response(stream, { headers: SSE_HEADERS });
}
