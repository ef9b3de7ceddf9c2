import { count } from "@/lib/words";

// Every span of time on a page is written with these words and lib/words.ts's relative time, whole units spelt out
// ("3 minutes", never "3 min"), so the desk never shows one time in two forms.
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
