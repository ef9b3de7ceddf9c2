"use client";

import { useEffect, useRef, useState } from "react";
import { useRefreshOneAtATime } from "@/components/ui/use-refresh";

/**
 * Re-renders the queue whenever its event stream says requests arrived or left (a stamp other than the one the page
 * was rendered with: a decision made here already brought its own fresh page), and shows the pending count.
 */
export function QueueLive({ shownStamp }: { shownStamp: string }) {
  const refresh = useRefreshOneAtATime();
  const [state, setState] = useState<"connecting" | "live" | "reconnecting">("connecting");
  const [pending, setPending] = useState<number | null>(null);
  const shown = useRef(shownStamp);
  useEffect(() => {
    shown.current = shownStamp;
  }, [shownStamp]);
  useEffect(() => {
    const source = new EventSource("/api/approvals/events");
    source.addEventListener("queue", (event) => {
      const queue = JSON.parse((event as MessageEvent<string>).data) as { pending: number; stamp: string };
      setPending(queue.pending);
      if (queue.stamp !== shown.current) refresh();
    });
    source.onopen = () => setState("live");
    source.onerror = () => setState("reconnecting");
    return () => source.close();
  }, [refresh]);
  return (
    <span className="muted" data-testid="queue-live">
      {state === "live" ? "● live" : state}
      {pending !== null && ` · ${pending} pending`}
    </span>
  );
}
