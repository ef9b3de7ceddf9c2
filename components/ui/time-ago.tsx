"use client";

import { useSyncExternalStore } from "react";

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

/** The exact time, the same on server and client: UTC, to the minute. */
export function absoluteTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** The one relative form of a time: "12 seconds ago", "3 minutes ago", "in 2 hours". */
export function relativeTime(iso: string, now: number): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const size = Math.abs(seconds);
  if (size < 1) return "just now";
  const [value, unit] =
    size < 60
      ? [size, "second"]
      : size < 3600
        ? [Math.floor(size / 60), "minute"]
        : size < 86_400
          ? [Math.floor(size / 3600), "hour"]
          : [Math.floor(size / 86_400), "day"];
  const text = `${value} ${unit}${value === 1 ? "" : "s"}`;
  return seconds < 0 ? `${text} ago` : `in ${text}`;
}

/** A time as people read it: relative ("5 minutes ago"), the exact time on hover (and until the page is hydrated). */
export function TimeAgo({ iso }: { iso: string }) {
  const now = useNow();
  const exact = absoluteTime(iso);
  return (
    <time dateTime={iso} title={exact}>
      {now === null ? exact : relativeTime(iso, now)}
    </time>
  );
}
