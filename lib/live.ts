import "server-only";
import pg from "pg";
import { logError } from "./log";
import { CALLS_CHANNEL } from "./gateway/record";

type Listener = () => void;

// One LISTEN connection per app process, fanned out to every open event stream of the process.
const globalForLive = globalThis as unknown as { toolgateLive?: { listeners: Map<string, Set<Listener>>; client: Promise<pg.Client | null> } };

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
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
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
