"use client";

import { useEffect, useState } from "react";

/** The exact time, the same on server and client: UTC, to the minute. */
export function absoluteTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export function relativeTime(iso: string, now: number): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const past = seconds <= 0;
  const size = Math.abs(seconds);
  const [value, unit] =
    size < 45 ? [0, "now"] : size < 3600 ? [Math.round(size / 60), "minute"] : size < 86_400 ? [Math.round(size / 3600), "hour"] : [Math.round(size / 86_400), "day"];
  if (unit === "now") return past ? "just now" : "in a moment";
  const text = `${value} ${unit}${value === 1 ? "" : "s"}`;
  return past ? `${text} ago` : `in ${text}`;
}

/**
 * A time as people read it: relative ("5 minutes ago"), the exact time on hover. The server renders the exact
 * time and the browser switches to the relative form after hydration, so the two renders never disagree.
 */
export function TimeAgo({ iso }: { iso: string }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  const exact = absoluteTime(iso);
  return (
    <time dateTime={iso} title={exact}>
      {now === null ? exact : relativeTime(iso, now)}
    </time>
  );
}
