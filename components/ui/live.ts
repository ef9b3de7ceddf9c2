"use client";

import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState, useTransition } from "react";

export type LiveState = "connecting" | "live" | "reconnecting";

/** How a live view says whether it is connected: "● live", "connecting", "reconnecting". */
export const liveWords = (state: LiveState) => (state === "live" ? "● live" : state);

/**
 * `router.refresh()` for a live view, one at a time: a refresh asked for while one is on its way runs once after it
 * lands. Overlapping refreshes make the router drop the earlier one mid-stream, which renders the page twice and
 * makes the server log the abandoned stream as an error.
 */
export function useRefreshOneAtATime(): () => void {
  const router = useRouter();
  const [refreshing, startTransition] = useTransition();
  const busy = useRef(false);
  const again = useRef(false);
  const refresh = useCallback(() => {
    if (busy.current) {
      again.current = true;
      return;
    }
    busy.current = true;
    startTransition(() => router.refresh());
  }, [router]);
  useEffect(() => {
    if (refreshing || !busy.current) return;
    busy.current = false;
    if (again.current) {
      again.current = false;
      refresh();
    }
  }, [refreshing, refresh]);
  return refresh;
}

/**
 * The one client side of a live view: listens to `event` on the server-sent event stream at `url` (lib/event-stream.ts)
 * and hands each event's parsed data to `onEvent`; the browser reconnects by itself. Returns the connection's state.
 */
export function useEventStream<T>(url: string, event: string, onEvent: (data: T) => void): LiveState {
  const [state, setState] = useState<LiveState>("connecting");
  const handler = useRef(onEvent);
  useEffect(() => {
    handler.current = onEvent;
  }, [onEvent]);
  useEffect(() => {
    const source = new EventSource(url);
    source.addEventListener(event, (message) => handler.current(JSON.parse((message as MessageEvent<string>).data)));
    source.onopen = () => setState("live");
    source.onerror = () => setState("reconnecting");
    return () => source.close();
  }, [url, event]);
  return state;
}
