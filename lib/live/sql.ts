import type { Client } from "../db";

// The statements of the live views: the watches that say which conversations have an open view.

/** The channel a change of a watched conversation's calls is announced on, with the conversation's id. */
export const CALLS_CHANNEL = "toolgate_calls";

/** Creates the live watch `id` of the conversation, or moves its expiry if it exists. */
export async function saveLiveWatch(
  db: Client,
  watch: { id: string; conversationId: string; expiresAt: Date },
): Promise<void> {
  const { id, conversationId, expiresAt } = watch;
  await db.liveWatch.upsert({
    where: { id },
    create: { id, conversationId, expiresAt },
    update: { expiresAt },
    select: { id: true },
  });
}

export async function deleteLiveWatch(db: Client, id: string): Promise<void> {
  await db.liveWatch.deleteMany({ where: { id } });
}

/** Deletes the live watches that expired before `now`; returns how many. */
export async function deleteExpiredLiveWatches(db: Client, now: Date): Promise<number> {
  return (await db.liveWatch.deleteMany({ where: { expiresAt: { lt: now } } })).count;
}
