"use client";

import { useEffect, useState } from "react";
import { useRefreshOneAtATime } from "@/components/ui/use-refresh";

/** Re-renders the queue whenever its event stream says requests arrived or left, and shows the pending count. */
export function QueueLive() {
  const refresh = useRefreshOneAtATime();
  const [state, setState] = useState<"connecting" | "live" | "reconnecting">("connecting");
  const [pending, setPending] = useState<number | null>(null);
  useEffect(() => {
    const source = new EventSource("/api/approvals/events");
    let first = true;
    source.addEventListener("queue", (event) => {
      setPending((JSON.parse((event as MessageEvent<string>).data) as { pending: number }).pending);
      if (!first) refresh();
      first = false;
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
