import { count } from "@/lib/words";

// Every span of time on a page is written with these words, whole units spelt out ("3 minutes", never "3 min"), so
// the desk never shows one time in two forms.
const UNITS = [
  ["day", 86_400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
] as const;

/** The time as a page writes it, the same on server and client: UTC, to the minute. */
export function absoluteTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** The exact time on hover: UTC, to the second, so events a few seconds apart can be told apart. */
export function exactTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** The one relative form of a time: "12 seconds ago", "3 minutes ago", "in 2 hours", each to the nearest unit. */
export function relativeTime(iso: string, now: number): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const size = Math.abs(seconds);
  if (size < 1) return "just now";
  // Rounded, not cut: a lifetime of 24 hours reads "in 1 day" when it starts, not "in 23 hours"; a unit gives way
  // to the next when it would round to 60 of itself (or 24 hours).
  const minutes = Math.round(size / 60);
  const hours = Math.round(size / 3600);
  const text =
    size < 60
      ? count(size, "second")
      : minutes < 60
        ? count(minutes, "minute")
        : hours < 24
          ? count(hours, "hour")
          : count(Math.round(size / 86_400), "day");
  return seconds < 0 ? `${text} ago` : `in ${text}`;
}

/** A span of time in its two largest units: "45 seconds", "3 minutes 20 seconds", "2 hours 5 minutes", "1 day 3 hours". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const index = UNITS.findIndex(([, length]) => seconds >= length);
  if (index === -1) return count(0, "second");
  const [unit, length] = UNITS[index];
  const text = count(Math.floor(seconds / length), unit);
  const next = UNITS[index + 1];
  const rest = next ? Math.floor((seconds % length) / next[1]) : 0;
  return rest && next ? `${text} ${count(rest, next[0])}` : text;
}
