"use client";

import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useTransition } from "react";

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
