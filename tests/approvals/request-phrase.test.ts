import { describe, expect, it } from "vitest";
import { requestPhrase } from "@/lib/approvals/words";

// One phrase for a call or a request, on the queue's cards, the mail, the chat notices, the history, the
// conversation's calls, the call timeline and the approval link's page.

describe("a call in a phrase", () => {
  it("says a refund with its money and its order", () => {
    const refund = { toolName: "issue_refund", orderId: "ord_1004", amountCents: 8000, currency: "USD" };
    expect(requestPhrase(refund)).toBe("80.00 USD refund on ord_1004");
    expect(requestPhrase({ ...refund, approvedCents: 8000 })).toBe("80.00 USD refund on ord_1004");
  });

  it("says what the supervisor approved when it was less, and what was asked", () => {
    const refund = { toolName: "issue_refund", orderId: "ord_1004", amountCents: 8000, currency: "EUR" };
    expect(requestPhrase({ ...refund, approvedCents: 7000 })).toBe(
      "70.00 EUR refund on ord_1004 (lowered from 80.00 EUR)",
    );
  });

  it("says a call that moves no money in the tool's words, without an amount", () => {
    expect(
      requestPhrase({ toolName: "update_shipping_address", orderId: "ord_1003", amountCents: 0, currency: "USD" }),
    ).toBe("address change on ord_1003");
    expect(requestPhrase({ toolName: "send_status_email", orderId: "ord_1003" })).toBe("status email on ord_1003");
    expect(requestPhrase({ toolName: "get_order", orderId: "ord_1003", amountCents: null, currency: null })).toBe(
      "order lookup on ord_1003",
    );
    expect(requestPhrase({ toolName: "archive_ticket", orderId: "ord_1" })).toBe("archive_ticket on ord_1");
    expect(requestPhrase({ toolName: "archive_ticket", orderId: null })).toBe("archive_ticket");
  });

  it("says a proposal that named no tool the conversation offers in words, not as its stored placeholder", () => {
    expect(requestPhrase({ toolName: "(unknown)", orderId: null })).toBe("call to no tool it may use");
  });

  it("names an upstream server's tool, never its server as an order", () => {
    expect(requestPhrase({ toolName: "write_file", orderId: "upstream:files", amountCents: 0, currency: null })).toBe(
      "write_file call",
    );
  });

  it("leaves the money out when the currency is unknown rather than guessing one", () => {
    expect(requestPhrase({ toolName: "issue_refund", orderId: "ord_9", amountCents: 500, currency: null })).toBe(
      "refund on ord_9",
    );
  });
});
