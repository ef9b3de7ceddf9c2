"use client";

import { absoluteTime } from "@/components/ui/time-ago";

export function TimeLeft({ expiresAt, now }: { expiresAt: string; now: number | null }) {
  if (now === null) {
    return (
      <time dateTime={expiresAt} title={absoluteTime(expiresAt)} data-testid="time-left">
        expires {absoluteTime(expiresAt)}
      </time>
    );
  }
  const seconds = Math.max(0, Math.round((new Date(expiresAt).getTime() - now) / 1000));
  return (
    <time
      dateTime={expiresAt}
      title={absoluteTime(expiresAt)}
      data-testid="time-left"
      className={seconds === 0 ? "error" : seconds < 120 ? "warn" : ""}
    >
      {seconds === 0 ? "expired" : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s left`}
    </time>
  );
}
