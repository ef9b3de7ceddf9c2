import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { endSessions } from "@/lib/admin/access/people";
import { endSession } from "@/lib/auth/sessions";
import { db } from "@/lib/db";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { agentConversation } from "../support/calls";
import { createWorld, type World } from "../support/world";

// The two live event streams through their route handlers, with the browser's session cookie: a stream opened
// while signed in closes within its poll interval once the session ends (sign-out, or an admin ends it), instead
// of streaming the queue to a browser that is no longer anyone's. (tests/hardening/live-session.test.ts does the
// same against the production build.)

const jar = vi.hoisted(() => ({ cookie: "" }));
vi.mock("next/headers", () => ({
  cookies: async () => ({
    get: (name: string) =>
      jar.cookie.startsWith(`${name}=`) ? { value: jar.cookie.slice(name.length + 1) } : undefined,
  }),
}));

const { GET: approvalsEvents } = await import("@/app/api/approvals/events/route");
const { GET: conversationEvents } = await import("@/app/api/conversations/[id]/events/route");

let world: World;
beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
  world = await createWorld();
});
afterEach(() => void (jar.cookie = ""));

async function signedInAs(user: keyof World["users"], role: "AGENT" | "SUPERVISOR") {
  jar.cookie = await personCookie(world.users[user], role);
  const session = await db.session.findFirstOrThrow({
    where: { userId: world.users[user], endedAt: null },
    orderBy: { createdAt: "desc" },
  });
  return session.id;
}

/** Reads the stream until it ends; the milliseconds from `from` to its end, or null if still open after `ms`. */
async function closesWithin(response: Response, from: () => number, ms: number): Promise<number | null> {
  const reader = response.body!.getReader();
  const deadline = Date.now() + ms;
  for (;;) {
    const next = await Promise.race([
      reader.read(),
      new Promise<"open">((resolve) => setTimeout(() => resolve("open"), Math.max(0, deadline - Date.now()))),
    ]);
    if (next === "open") {
      await reader.cancel();
      return null;
    }
    if (next.done) return Date.now() - from();
  }
}

describe("live streams end with the session", () => {
  it("closes the supervisors' queue stream within its poll once the person signs out", async () => {
    const sessionId = await signedInAs("supervisor", "SUPERVISOR");
    const response = await approvalsEvents(new Request("http://toolgate.test/api/approvals/events"));
    expect(response.status).toBe(200);
    let endedAt = Number.POSITIVE_INFINITY;
    setTimeout(() => {
      endedAt = Date.now();
      void endSession(sessionId, "signed-out");
    }, 500);
    expect(await closesWithin(response, () => endedAt, 6000)).toBeLessThan(3000);
  });

  it("closes an agent's conversation stream within its poll once an admin ends the session", async () => {
    const conversation = await agentConversation(world);
    const sessionId = await signedInAs("agent", "AGENT");
    const response = await conversationEvents(
      new Request(`http://toolgate.test/api/conversations/${conversation}/events`),
      {
        params: Promise.resolve({ id: conversation }),
      },
    );
    expect(response.status).toBe(200);
    let endedAt = Number.POSITIVE_INFINITY;
    setTimeout(() => {
      endedAt = Date.now();
      void endSessions({ id: world.users.admin, tenantId: world.tenantId }, { sessionId });
    }, 500);
    expect(await closesWithin(response, () => endedAt, 8000)).toBeLessThan(4000);
  });

  it("keeps a live session's stream open", async () => {
    await signedInAs("supervisor", "SUPERVISOR");
    const response = await approvalsEvents(new Request("http://toolgate.test/api/approvals/events"));
    expect(await closesWithin(response, () => 0, 5000)).toBeNull();
  });
});
