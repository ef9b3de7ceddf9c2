// How the app writes a time and a long text where no browser formats them: mail, chat notices, held changes, the
// note a model reads.

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

/** "1 call", "3 calls": `n` and its noun, plural as given or with an s. */
export const count = (n: number, noun: string, plural = `${noun}s`) => `${n} ${n === 1 ? noun : plural}`;
