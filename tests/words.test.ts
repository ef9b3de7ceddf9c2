import { describe, expect, it } from "vitest";
import { shorten, utcWords } from "@/lib/words";

// The words mail, chat notices, held changes and a model's deny note use where no browser formats them.

describe("words without a browser", () => {
  it("writes a time in UTC, from a Date or an ISO string alike", () => {
    expect(utcWords(new Date("2026-12-03T15:20:59Z"))).toBe("3 Dec 2026, 15:20 UTC");
    expect(utcWords("2026-12-03T23:59:00-02:00")).toBe("4 Dec 2026, 01:59 UTC");
  });

  it("cuts a text to its limit with an ellipsis, never splitting a character", () => {
    expect(shorten("abc", 3)).toBe("abc");
    expect(shorten("abcd", 3)).toBe("ab…");
    // An emoji is two UTF-16 units: it goes whole or not at all, and the result stays within the limit.
    expect(shorten("a😀😀b", 3)).toBe("a…");
    expect(shorten("a😀😀b", 4)).toBe("a😀…");
    expect(shorten("😀".repeat(100), 150).length).toBeLessThanOrEqual(150);
    expect(shorten("😀".repeat(100), 150)).toBe(`${"😀".repeat(74)}…`);
  });
});
