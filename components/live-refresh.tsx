"use client";

import { useEffect, useState } from "react";
import { useRefreshOneAtATime } from "@/components/ui/use-refresh";

/** Re-renders the page's server components whenever the conversation's event stream says its calls changed. */
export function LiveRefresh({ conversationId }: { conversationId: string }) {
  const refresh = useRefreshOneAtATime();
  const [state, setState] = useState<"connecting" | "live" | "reconnecting">("connecting");
  useEffect(() => {
    const source = new EventSource(`/api/conversations/${encodeURIComponent(conversationId)}/events`);
    let first = true;
    source.addEventListener("calls", () => {
      if (!first) refresh();
      first = false;
    });
    source.onopen = () => setState("live");
    source.onerror = () => setState("reconnecting");
    return () => source.close();
  }, [conversationId, refresh]);
  return (
    <span className="muted" data-testid="live-state">
      {state === "live" ? "● live" : state}
    </span>
  );
}
