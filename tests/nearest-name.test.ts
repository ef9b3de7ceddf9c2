import { describe, expect, it } from "vitest";
import { nearestName } from "@/lib/nearest-name";

// The name a model meant by one it was not offered: the hint of `tool.unknown`, only ever among the offered names.

const OFFERED = ["get_order", "issue_refund", "send_status_email", "get_call_status", "tickets__create_ticket"];

describe("the nearest offered name", () => {
  it("takes case, - and _ as no difference: a camelCase, kebab-case or capitalized name is its snake_case tool", () => {
    for (const called of ["issueRefund", "issue-refund", "ISSUE_REFUND", "Issue__Refund"])
      expect(nearestName(called, OFFERED)).toBe("issue_refund");
    expect(nearestName("tickets_create_ticket", OFFERED)).toBe("tickets__create_ticket");
  });

  it("forgives an edit in four of the name's length, a typo of a short name or a misspelled server prefix", () => {
    expect(nearestName("get_ordr", OFFERED)).toBe("get_order");
    expect(nearestName("gt_ordr", OFFERED)).toBe("get_order");
    expect(nearestName("send_status_mail", OFFERED)).toBe("send_status_email");
    expect(nearestName("ticket__create_ticket", OFFERED)).toBe("tickets__create_ticket");
    expect(nearestName("mcp__tickets__create_ticket", OFFERED)).toBe("tickets__create_ticket");
  });

  it("names nothing when no name is that near", () => {
    for (const called of ["drop_tables", "delete_order", "refund", "get_status", "x", "", "g".repeat(16_000)])
      expect(nearestName(called, OFFERED)).toBeNull();
    expect(nearestName("get_ordr", [])).toBeNull();
  });

  it("prefers the nearer name as written, and names nothing when two are equally near", () => {
    expect(nearestName("get-order", ["GetOrder", "get_order"])).toBe("get_order");
    expect(nearestName("get_orderx", ["get_order_a", "get_order_b"])).toBeNull();
    expect(nearestName("get_ordr", ["get_order", "get_order"])).toBe("get_order");
  });
});
