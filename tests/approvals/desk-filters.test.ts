import { describe, expect, it } from "vitest";
import { parseQueueFilters, queueSearchParams } from "@/lib/approvals/desk/filters";
import { centsOfTyped } from "@/lib/money";
import { loweredAmount } from "@/components/approvals/amount-field";

// The desk's filters read from its address (what a supervisor typed, or edited by hand): amounts in cents exactly,
// anything unreadable dropped rather than an error page.

describe("the desk's filters from its address", () => {
  it("reads an amount typed with a point or a comma exactly, and drops one that is not an amount", () => {
    expect(parseQueueFilters({ min: "80,5", max: " 100 " })).toMatchObject({ minCents: 8050, maxCents: 10000 });
    expect(parseQueueFilters({ min: "0.07", max: "9999999.99" })).toMatchObject({ minCents: 7, maxCents: 999999999 });
    for (const typed of ["1e3", "-5", "12.345", "10000000", "80 USD", ""])
      expect(parseQueueFilters({ min: typed }).minCents, typed).toBeUndefined();
    expect(parseQueueFilters({ min: ["12", "99"], age: "abc", sort: "sideways" })).toMatchObject({
      minCents: 1200,
      olderThanMinutes: undefined,
      sort: undefined,
    });
  });

  it("writes the filters back into an address that reads the same", () => {
    const filters = parseQueueFilters({ min: "80,5", max: "120", agent: "usr_1", q: " ana ", age: "30" });
    expect(parseQueueFilters(Object.fromEntries(new URLSearchParams(queueSearchParams(filters, null))))).toEqual(
      filters,
    );
  });

  it("the decide dialog reads a lowered amount the same way", () => {
    expect(centsOfTyped("49,99")).toBe(4999);
    expect(centsOfTyped("0.1")).toBe(10);
    expect(centsOfTyped("49.999")).toBeNull();
    expect(loweredAmount("12.345", 8000, "USD")).toEqual({
      cents: null,
      problem: "Write the amount as a number with at most two decimals, for example 80.00.",
    });
    expect(loweredAmount("90", 8000, "USD").problem).toBe(
      "Enter an amount from 0.01 up to 80.00 USD; an approval can only lower it.",
    );
    expect(loweredAmount("79,5", 8000, "USD")).toEqual({ cents: 7950, problem: null });
  });
});
