import { describe, expect, it } from "vitest";
import { heldWords } from "@/lib/admin/changes/words";
import { count, shorten, utcWords } from "@/lib/words";

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

  it("counts with the noun's plural, given or with an s", () => {
    expect([count(1, "call"), count(3, "call"), count(0, "test case"), count(2, "copy", "copies")]).toEqual([
      "1 call",
      "3 calls",
      "0 test cases",
      "2 copies",
    ]);
  });

  it("tells the proposer of a held change how long it waits, the exact time, and where it is listed", () => {
    const now = new Date("2026-12-07T11:49:00Z");
    const held = (hours: number, mode: "second-admin" | "delay") => {
      const ends = new Date(now.getTime() + hours * 3_600_000);
      return { id: "chg_1", mode, applyAt: mode === "delay" ? ends : null, expiresAt: ends };
    };
    expect(heldWords(held(24, "second-admin"), now)).toBe(
      "This loosens control, so it waits for another admin to approve it within 1 day (8 Dec 2026, 11:49 UTC); it is listed under Changes waiting on Policy and keys.",
    );
    expect(heldWords(held(72, "delay"), now)).toBe(
      "This loosens control, so it applies in 3 days (10 Dec 2026, 11:49 UTC) unless a supervisor or admin cancels it; it is listed under Changes waiting on Policy and keys.",
    );
    expect(heldWords(held(0.25, "delay"), now)).toContain("applies in 15 minutes (7 Dec 2026, 12:04 UTC)");
    expect(heldWords(null, now)).toBeNull();
  });
});
