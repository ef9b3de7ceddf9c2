import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { redact } from "@/lib/observe/log";
import { agentConversation, proposeAsAgent } from "../support/calls";
import { createWorld } from "../support/world";

// Log lines written while the real route serves a call: each carries the request's id and the call's id, and
// none carries the API key or an argument value.

let lines: string[] = [];

beforeEach(() => {
  lines = [];
  vi.spyOn(console, "error").mockImplementation((line: unknown) => void lines.push(String(line)));
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("structured logs", () => {
  it("a call whose provider is not configured logs with the request id and call id, and no key or argument", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    // This file's process has not made a provider yet, so the refund's external half fails and is logged.
    const url = process.env.PAYMENT_PROVIDER_URL;
    delete process.env.PAYMENT_PROVIDER_URL;
    try {
      const response = await proposeAsAgent(world, conversation, {
        name: "issue_refund",
        arguments: { order_id: world.orders.o1001, amount_cents: 1234, currency: "USD", reason: "wrong_item" },
      });
      expect(response.json.code).toBe("refund.outcome-unknown");
      const requestId = response.headers.get("x-request-id");
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        expect(parsed).toMatchObject({ requestId, callId: response.json.id });
        expect(line).not.toContain(world.keys.agent);
        expect(line).not.toContain(world.orders.o1001);
        expect(line).not.toContain("1234");
        expect(line).not.toContain("wrong_item");
      }
      expect(lines.map((line) => (JSON.parse(line) as { event: string }).event)).toContain("gateway.external-failed");
    } finally {
      process.env.PAYMENT_PROVIDER_URL = url;
    }
  });

  it("masks anything shaped like a key, a bearer credential or a password", () => {
    const key = `tg_${"a".repeat(43)}`;
    const masked = redact(
      JSON.stringify({
        message: `bad ${key}; header Bearer ${key}; body {"password":"toolgate-demo"} or password=hunter2&x=1`,
      }),
    );
    expect(masked).not.toContain(key.slice(3));
    expect(masked).not.toContain("toolgate-demo");
    expect(masked).not.toContain("hunter2");
    expect(masked).toContain("Bearer [redacted]");
  });
});
