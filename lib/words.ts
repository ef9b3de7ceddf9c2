// How the app writes a time and a long text: where no browser formats them (mail, chat notices, held changes, the
// note a model reads) and, for the relative time, on the pages too, so a span reads the same everywhere.

const UTC = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });

/** A time as mail and chat write it: "3 Dec 2026, 15:20 UTC". */
export const utcWords = (at: Date | string) => `${UTC.format(new Date(at))} UTC`;

/** `text` cut to at most `max` UTF-16 units, ending in "…" when cut; a character is never split in two. */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  let kept = "";
  for (const character of text) {
    if (kept.length + character.length > max - 1) break;
    kept += character;
  }
  return `${kept}…`;
}

/** "Fill in the URL and the signing secret first.", naming the fields left empty; null when none is. */
export function fillInFirst(fields: [label: string, value: string][]): string | null {
  const empty = fields.filter(([, value]) => !value.trim()).map(([label]) => label);
  if (empty.length === 0) return null;
  return `Fill in ${empty.length === 1 ? empty[0] : `${empty.slice(0, -1).join(", ")} and ${empty.at(-1)}`} first.`;
}

/** "1 call", "3 calls": `n` and its noun, plural as given or with an s. */
export const count = (n: number, noun: string, plural = `${noun}s`) => `${n} ${n === 1 ? noun : plural}`;

/** A span of time to its nearest whole unit, spelt out: "12 seconds", "3 minutes", "1 day". */
export function roundedSpan(ms: number): string {
  const size = Math.round(Math.abs(ms) / 1000);
  // Rounded, not cut: a lifetime of 24 hours reads "1 day" when it starts, not "23 hours"; a unit gives way to the
  // next when it would round to 60 of itself (or 24 hours).
  const minutes = Math.round(size / 60);
  const hours = Math.round(size / 3600);
  if (size < 60) return count(size, "second");
  if (minutes < 60) return count(minutes, "minute");
  if (hours < 24) return count(hours, "hour");
  return count(Math.round(size / 86_400), "day");
}

/** The one relative form of a time: "12 seconds ago", "3 minutes ago", "in 2 hours", each to the nearest unit. */
export function relativeTime(at: string | Date, now: number): string {
  const ms = new Date(at).getTime() - now;
  if (Math.abs(ms) < 500) return "just now";
  return ms < 0 ? `${roundedSpan(ms)} ago` : `in ${roundedSpan(ms)}`;
}
