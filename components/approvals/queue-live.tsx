"use client";

import { useEffect, useRef, useState } from "react";
import { liveWords, useEventStream, useRefreshOneAtATime } from "@/components/ui/live";

/**
 * Re-renders the queue whenever its event stream says requests arrived or left (a stamp other than the one the page
 * was rendered with: a decision made here already brought its own fresh page), and shows the pending count.
 */
export function QueueLive({ shownStamp }: { shownStamp: string }) {
  const refresh = useRefreshOneAtATime();
  const [pending, setPending] = useState<number | null>(null);
  const shown = useRef(shownStamp);
  useEffect(() => {
    shown.current = shownStamp;
  }, [shownStamp]);
  const state = useEventStream<{ pending: number; stamp: string }>("/api/approvals/events", "queue", (queue) => {
    setPending(queue.pending);
    if (queue.stamp !== shown.current) refresh();
  });
  return (
    <span className="muted" data-testid="queue-live">
      {liveWords(state)}
      {pending !== null && ` · ${pending} pending`}
    </span>
  );
}
