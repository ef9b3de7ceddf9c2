import pg from "pg";
import { db } from "../db";
import { newId } from "../ids";
import { logError } from "../observe/log";
import { env } from "../env";
import { CALLS_CHANNEL, deleteExpiredLiveWatches, deleteLiveWatch, saveLiveWatch } from "./sql";

type Listener = () => void;

// One LISTEN connection per app process, fanned out to every open event stream of the process.
const globalForLive = globalThis as unknown as {
  toolgateLive?: { listeners: Map<string, Set<Listener>>; client: Promise<pg.Client | null> };
};

function hub() {
  if (!globalForLive.toolgateLive) {
    const listeners = new Map<string, Set<Listener>>();
    const client = connect(listeners);
    globalForLive.toolgateLive = { listeners, client };
  }
  return globalForLive.toolgateLive;
}

async function connect(listeners: Map<string, Set<Listener>>): Promise<pg.Client | null> {
  try {
    const client = new pg.Client({ connectionString: env().DATABASE_URL });
    await client.connect();
    client.on("notification", (message) => {
      for (const listener of listeners.get(message.payload ?? "") ?? []) listener();
    });
    client.on("error", (error) => {
      logError("live.listen-lost", error);
      if (globalForLive.toolgateLive) globalForLive.toolgateLive.client = Promise.resolve(null);
    });
    await client.query(`LISTEN ${CALLS_CHANNEL}`);
    return client;
  } catch (error) {
    // Without LISTEN the streams still poll; live views are slower, never wrong.
    logError("live.listen-unavailable", error);
    return null;
  }
}

/** Closes the LISTEN connection (graceful shutdown). */
export async function stopLive(): Promise<void> {
  const live = globalForLive.toolgateLive;
  globalForLive.toolgateLive = undefined;
  await (await live?.client)?.end();
}

/** Whether this process holds its LISTEN connection; without it, notices do not arrive and waiters must look. */
export async function listening(): Promise<boolean> {
  return (await hub().client) !== null;
}

/** Calls `listener` whenever the conversation's calls change; returns the unsubscribe function. */
export function subscribe(conversationId: string, listener: Listener): () => void {
  const { listeners } = hub();
  const set = listeners.get(conversationId) ?? new Set<Listener>();
  set.add(listener);
  listeners.set(conversationId, set);
  return () => {
    set.delete(listener);
    if (set.size === 0) listeners.delete(conversationId);
  };
}

/** A watch lives this long unless refreshed, so the views of a stopped instance stop costing NOTIFYs. */
const WATCH_TTL_MS = 45_000;

export interface Watch {
  refresh(): Promise<void>;
  end(): Promise<void>;
}

/**
 * Records an open live view (or a waiter) of the conversation: writers notify only watched conversations
 * (lib/gateway/outcome/record.ts). The view refreshes it while open and ends it when it closes. Writing the watch takes a
 * key-share lock on the conversation row, which every writer locks first: a change committed after the watch is
 * notified, and one committed before it is visible to a read made after it.
 */
export async function watchConversation(conversationId: string, ttlMs = WATCH_TTL_MS): Promise<Watch> {
  const id = newId("lw");
  // Upserted, so a watch pruned while its view was stalled comes back with the next refresh.
  const save = async () => {
    const expiresAt = new Date(Date.now() + ttlMs);
    await saveLiveWatch(db, { id, conversationId, expiresAt });
  };
  await save();
  return {
    refresh: save,
    end: async () => {
      await deleteLiveWatch(db, id);
    },
  };
}

/** Drops the watches of views that closed without ending them (a stopped instance, a lost connection). */
export async function pruneLiveWatches(): Promise<number> {
  return deleteExpiredLiveWatches(db, new Date());
}

// Only when this process has no LISTEN connection: then a waiter looks this often instead of being told.
const FALLBACK_POLL_MS = 2000;

/** One look at what a waiter waits for: whether it is over, what to answer, and when to look again unprompted. */
export interface Looked<T> {
  done: boolean;
  value: T;
  /** A change that sends no notice (an approval lapsing) happens then. */
  wakeAt?: Date | null;
}

/**
 * Looks again whenever the conversation's calls change until a look says done or `seconds` pass, and answers the
 * last look. Handed in by whoever proposes the call (lib/agent-api/propose.ts); the gateway only passes it on.
 */
export type ConversationWaiter = <T>(
  conversationId: string,
  seconds: number,
  look: () => Promise<Looked<T>>,
  signal?: AbortSignal,
) => Promise<T>;

/**
 * The one waiter of the app (a held call's `?wait=N`, `get_call_status` with `wait_seconds`): it holds a watch on
 * the conversation, so writers NOTIFY it, and looks once per notice, not by polling; a change that sends no notice
 * is looked at when the last look said it happens (`wakeAt`).
 */
export const waitForConversation: ConversationWaiter = async <T>(
  conversationId: string,
  seconds: number,
  look: () => Promise<Looked<T>>,
  signal?: AbortSignal,
): Promise<T> => {
  const deadline = Date.now() + seconds * 1000;
  let wake = () => {};
  let changed = false;
  const unsubscribe = subscribe(conversationId, () => {
    changed = true;
    wake();
  });
  const watch = await watchConversation(conversationId, seconds * 1000 + 15_000);
  const pushed = await listening();
  try {
    // The first look comes after the watch and LISTEN are in place: a change before it is seen by this look.
    let last = await look();
    for (;;) {
      if (last.done) return last.value;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return last.value;
      // A notice that arrived during the look found no sleeper to wake: look again instead of sleeping.
      if (!changed) {
        const untilWake = last.wakeAt ? Math.max(0, last.wakeAt.getTime() - Date.now()) + 5 : Infinity;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, Math.min(left, untilWake, pushed ? Infinity : FALLBACK_POLL_MS));
          function done() {
            clearTimeout(timer);
            signal?.removeEventListener("abort", done);
            resolve();
          }
          wake = done;
          signal?.addEventListener("abort", done);
        });
        wake = () => {};
      }
      changed = false;
      last = await look();
    }
  } finally {
    unsubscribe();
    await watch.end().catch((error) => logError("live.watch-failed", error, { conversationId }));
  }
};
