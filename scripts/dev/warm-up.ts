import { setTimeout as sleep } from "node:timers/promises";

// `next dev` compiles a page (and a route) the first time someone asks for it, which on two cores takes seconds. Once
// the server answers, `npm run dev` asks for what a newcomer opens first, one after another, so their first clicks
// find it compiled: the README's walk (its pages, then the agent API its curl lines call), then the other pages.
// Signed out, each answers with the sign-in page, a redirect to it, a 401 or a 405: compiled all the same.
const FIRST_PAGES = [
  "/login",
  "/api/auth/providers",
  "/",
  "/approvals",
  "/api/approvals/events",
  "/conversations",
  "/conversations/warm-up",
  "/calls/warm-up",
  "/admin/policy",
  "/approvals/history",
  "/settings",
  "/approvals/r/warm-up",
  "/api/v1/conversations",
  "/api/v1/conversations/warm-up/tool-calls",
  "/api/v1/conversations/warm-up/tools",
  "/api/v1/tool-calls/warm-up",
  "/api/mcp",
  "/admin/rules",
  "/admin/upstream",
  "/connections",
  "/admin/chat",
];
const GIVE_UP_AFTER_MS = 5 * 60_000;

/** Asks `base` for the first pages; true once all were compiled, false if it stopped or gave up first. */
export async function warmUp(base: string, stopped: () => boolean): Promise<boolean> {
  const deadline = Date.now() + GIVE_UP_AFTER_MS;
  for (const page of FIRST_PAGES) {
    for (;;) {
      if (stopped() || Date.now() > deadline) return false;
      try {
        const answer = await fetch(`${base}${page}`, { redirect: "manual" });
        await answer.arrayBuffer();
        break;
      } catch {
        // Not listening yet (or restarting): ask again shortly.
        await sleep(1000);
      }
    }
  }
  return true;
}
