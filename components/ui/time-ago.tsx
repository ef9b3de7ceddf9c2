"use client";

import { useSyncExternalStore } from "react";
import { relativeTime } from "@/lib/words";
import { absoluteTime, exactTime, formatDuration } from "./time-words";

// One clock for every time shown relative to now. The server's "now" is not the browser's, so the server render and
// hydration see null (pages show the exact time) and the browser's clock takes over right after, ticking each second.
const listeners = new Set<() => void>();
let current = 0;
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    current = Date.now();
    timer = setInterval(() => {
      current = Date.now();
      for (const notify of listeners) notify();
    }, 1000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const browserNow = () => current || (current = Date.now());
const serverNow = () => null;

/** Null on the server and while hydrating, then the browser's clock every second. */
export function useNow(): number | null {
  return useSyncExternalStore(subscribe, browserNow, serverNow);
}

/** A time as people read it: relative ("5 minutes ago"), the exact time on hover (and until the page is hydrated). */
export function TimeAgo({ iso }: { iso: string }) {
  const now = useNow();
  return (
    <time dateTime={iso} title={exactTime(iso)}>
      {now === null ? absoluteTime(iso) : relativeTime(iso, now)}
    </time>
  );
}

/**
 * What is left of a deadline, ticking: "14 minutes 5 seconds left", then "expired" from the deadline on (the moment a
 * card's buttons disable, so the words never say expired while they still work); the exact time until hydrated.
 */
export function TimeLeft({ expiresAt, now }: { expiresAt: string; now: number | null }) {
  if (now === null) {
    return (
      <time dateTime={expiresAt} title={exactTime(expiresAt)} data-testid="time-left">
        expires {absoluteTime(expiresAt)}
      </time>
    );
  }
  const seconds = Math.max(0, Math.ceil((new Date(expiresAt).getTime() - now) / 1000));
  return (
    <time
      dateTime={expiresAt}
      title={exactTime(expiresAt)}
      data-testid="time-left"
      className={seconds === 0 ? "error" : seconds < 120 ? "warn" : ""}
    >
      {seconds === 0 ? "expired" : `${formatDuration(seconds * 1000)} left`}
    </time>
  );
}

/** `TimeLeft` on the browser's own clock, for a page that shows one deadline. */
export function Countdown({ expiresAt }: { expiresAt: string }) {
  return <TimeLeft expiresAt={expiresAt} now={useNow()} />;
}
