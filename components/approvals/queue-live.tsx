"use client";

import { useEffect, useRef, useState } from "react";
import { liveWords, useEventStream, useRefreshOneAtATime } from "@/components/ui/live";

/**
 * Re-renders the queue whenever its event stream says requests arrived or left (a stamp other than the one the page
 * was rendered with: a decision made here already brought its own fresh page), and shows the pending count: the
 * stream's latest, unless the page was rendered anew since it came (then the page's own, which is newer).
 */
export function QueueLive({ shownStamp, shownPending }: { shownStamp: string; shownPending: number }) {
  const refresh = useRefreshOneAtATime();
  const [last, setLast] = useState<{ pending: number; during: string } | null>(null);
  const shown = useRef(shownStamp);
  useEffect(() => {
    shown.current = shownStamp;
  }, [shownStamp]);
  const state = useEventStream<{ pending: number; stamp: string }>("/api/approvals/events", "queue", (queue) => {
    setLast({ pending: queue.pending, during: shown.current });
    if (queue.stamp !== shown.current) refresh();
  });
  const pending = last && last.during === shownStamp ? last.pending : shownPending;
  return (
    <span className="muted" data-testid="queue-live">
      {liveWords(state)} · {pending} pending
    </span>
  );
}
