import { setTimeout as sleep } from "node:timers/promises";

// `next dev` compiles a page the first time someone asks for it, which on two cores takes seconds. Once the server
// answers, `npm run dev` asks for the pages a newcomer opens first, one after another, so their first clicks find
// them compiled. Signed out, each answers with the sign-in page or a redirect to it: compiled all the same.
const FIRST_PAGES = ["/login", "/approvals", "/conversations", "/admin/policy", "/approvals/history", "/settings"];
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
