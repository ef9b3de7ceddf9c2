"use client";

import { useRef } from "react";
import { liveWords, useEventStream, useRefreshOneAtATime } from "@/components/ui/live";

/** Re-renders the page's server components whenever the conversation's event stream says its calls changed. */
export function LiveRefresh({ conversationId }: { conversationId: string }) {
  const refresh = useRefreshOneAtATime();
  // The stream's first event describes the calls the page was rendered with.
  const first = useRef(true);
  const state = useEventStream(`/api/conversations/${encodeURIComponent(conversationId)}/events`, "calls", () => {
    if (!first.current) refresh();
    first.current = false;
  });
  return (
    <span className="muted" data-testid="live-state">
      {liveWords(state)}
    </span>
  );
}
