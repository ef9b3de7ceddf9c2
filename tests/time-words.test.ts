import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { absoluteTime, exactTime, formatDuration } from "@/components/ui/time-words";
import { relativeTime } from "@/lib/words";

const now = Date.parse("2026-12-04T12:00:00Z");
const at = (seconds: number) => new Date(now + seconds * 1000).toISOString();

// The only words a time may be written in: whole units spelt out, one or two of them.
const AMOUNT = String.raw`\d+ (day|hour|minute|second)s?`;
const RELATIVE = new RegExp(String.raw`^(just now|in ${AMOUNT}|${AMOUNT} ago)$`);
const DURATION = new RegExp(String.raw`^${AMOUNT}( ${AMOUNT})?$`);

describe("relative times", () => {
  it("reads a 24-hour lifetime as a day when it starts, not 23 hours", () => {
    expect(relativeTime(at(24 * 3600 - 2), now)).toBe("in 1 day");
    expect(relativeTime(at(15 * 60 - 1), now)).toBe("in 15 minutes");
  });

  it("rounds to the nearest unit and moves up a unit instead of reading 60 of the smaller one", () => {
    expect(relativeTime(at(0), now)).toBe("just now");
    expect(relativeTime(at(-1), now)).toBe("1 second ago");
    expect(relativeTime(at(-59), now)).toBe("59 seconds ago");
    expect(relativeTime(at(-89), now)).toBe("1 minute ago");
    expect(relativeTime(at(-90), now)).toBe("2 minutes ago");
    expect(relativeTime(at(-(59 * 60 + 40)), now)).toBe("1 hour ago");
    expect(relativeTime(at(-(2 * 3600 + 20 * 60)), now)).toBe("2 hours ago");
    expect(relativeTime(at(-(23 * 3600 + 40 * 60)), now)).toBe("1 day ago");
    expect(relativeTime(at(3 * 86_400 + 13 * 3600), now)).toBe("in 4 days");
  });

  it("writes a time in UTC to the minute and gives it to the second on hover, the same on server and client", () => {
    expect(absoluteTime("2026-12-04T09:05:59.123Z")).toBe("2026-12-04 09:05 UTC");
    expect(exactTime("2026-12-04T09:05:59.123Z")).toBe("2026-12-04 09:05:59 UTC");
  });
});

describe("durations", () => {
  it("use the same unit words as relative times, in their two largest units", () => {
    expect(formatDuration(0)).toBe("0 seconds");
    expect(formatDuration(45_000)).toBe("45 seconds");
    expect(formatDuration(60_000)).toBe("1 minute");
    expect(formatDuration(200_000)).toBe("3 minutes 20 seconds");
    expect(formatDuration((2 * 3600 + 5 * 60 + 9) * 1000)).toBe("2 hours 5 minutes");
    expect(formatDuration((27 * 3600 + 59 * 60) * 1000)).toBe("1 day 3 hours");
  });
});

describe("one form for every time", () => {
  it("writes every relative time and duration, past and future, in the same words", () => {
    for (let seconds = 1; seconds < 40 * 86_400; seconds = Math.ceil(seconds * 1.07)) {
      expect(relativeTime(at(seconds), now)).toMatch(RELATIVE);
      expect(relativeTime(at(-seconds), now)).toMatch(RELATIVE);
      expect(formatDuration(seconds * 1000)).toMatch(DURATION);
    }
  });

  it("has no second formatter: pages write times only through components/ui/time-words.ts", () => {
    const root = path.resolve(import.meta.dirname, "..");
    const files = ["app", "components"].flatMap((folder) =>
      readdirSync(path.join(root, folder), { recursive: true, encoding: "utf8" })
        .filter((file) => /\.tsx?$/.test(file))
        .map((file) => path.join(folder, file)),
    );
    const own = path.join("components", "ui", "time-words.ts");
    // A relative phrase, an abbreviated unit in a string, or the platform's own formatters each mean a second form.
    const secondForm =
      /(?<!-)\bago\b|RelativeTimeFormat|DateTimeFormat|toLocale(Date|Time)?String\(\)|["'`][^"'`\n]*[\d}]\s?(min|mins|h|hr|hrs|s|sec|secs|d)\b[^"'`\n]*["'`]/;
    const offenders = files.filter((file) => {
      if (file === own) return false;
      const code = readFileSync(path.join(root, file), "utf8").replace(/^\s*(\/\/|\/?\*).*$/gm, "");
      return secondForm.test(code);
    });
    expect(offenders).toEqual([]);
  });
});
