import { describe, expect, it, vi } from "vitest";
import { POST as openRoute } from "@/app/api/v1/conversations/route";
import { db } from "@/lib/db";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { createWorld } from "../support/world";
import { jar } from "../support/cookie-jar";

// Opening conversations, the browser's action and the REST route, through the functions the requests reach: the
// browser is held to the API key's limit, and the REST route reads no further than its limit.
// (tests/hardening/exposure-limits.test.ts sends the same requests to the production build.)

vi.mock("next/headers", async () => (await import("../support/cookie-jar")).nextHeadersMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
const { openConversationAction } = await import("@/lib/conversations/actions");

describe("opening conversations", () => {
  it("holds the browser's open action to rateOpenPerMin per person, opening nothing past it", async () => {
    const world = await createWorld({ rateOpenPerMin: 2 });
    jar.cookie = await personCookie(world.users.agent);
    const answers = [];
    for (let attempt = 0; attempt < 4; attempt++)
      answers.push(await openConversationAction({ customer_id: world.customers.ana }));
    expect(answers.map((answer) => (answer.ok ? "ok" : answer.code))).toEqual([
      "ok",
      "ok",
      "rate.limited",
      "rate.limited",
    ]);
    expect(answers[2]).toMatchObject({ message: expect.stringMatching(/try again in \d+ s/) });
    expect(await db.conversation.count({ where: { agentId: world.users.agent } })).toBe(2);
  });

  it("refuses a REST open body past its limit with 413 request.too-large and Connection: close, opening nothing", async () => {
    const world = await createWorld();
    const response = await openRoute(
      new Request("http://toolgate.test/api/v1/conversations", {
        method: "POST",
        headers: { authorization: `Bearer ${world.keys.agent}`, "content-type": "application/json" },
        body: JSON.stringify({ customer_id: world.customers.ana, padding: "x".repeat(100_000) }),
      }),
    );
    expect(response.status).toBe(413);
    expect(response.headers.get("connection")).toBe("close");
    expect(await response.json()).toMatchObject({ error: { code: "request.too-large" } });
    expect(await db.conversation.count({ where: { agentId: world.users.agent } })).toBe(0);
  });
});
