"use client";

import { absoluteTime } from "@/components/ui/time-ago";

function relative(ms: number): string {
  const seconds = Math.round(Math.abs(ms) / 1000);
  const text =
    seconds < 60
      ? `${seconds} s`
      : seconds < 3600
        ? `${Math.floor(seconds / 60)} min`
        : seconds < 86400
          ? `${Math.floor(seconds / 3600)} h`
          : `${Math.floor(seconds / 86400)} d`;
  return ms < 0 ? `${text} ago` : `in ${text}`;
}

/** "3 min ago", with the exact time on hover; the exact time alone until the page is mounted. */
export function RelativeTime({ iso, now }: { iso: string; now: number | null }) {
  return (
    <time dateTime={iso} title={absoluteTime(iso)}>
      {now === null ? absoluteTime(iso) : relative(new Date(iso).getTime() - now)}
    </time>
  );
}

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
