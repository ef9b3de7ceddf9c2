import { availableParallelism } from "node:os";
import { hash, verify } from "@node-rs/argon2";
import bcrypt from "bcryptjs";

// Passwords are hashed with argon2id on the libuv thread pool, never on the event loop that serves the agent
// API. At most (cores - 1) hashes run at once, and each slot rests as long as its hash took before the next
// one starts, so a flood of sign-ins can take at most half of those cores from everything else.

// The package's default algorithm is argon2id; these are OWASP's minimums for it.
const OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
const SLOTS = Math.max(1, availableParallelism() - 1);

let running = 0;
const waiting: (() => void)[] = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  const started = performance.now();
  try {
    return await work();
  } finally {
    setTimeout(() => {
      running--;
      waiting.shift()?.();
    }, performance.now() - started);
  }
}

export function hashPassword(password: string): Promise<string> {
  return limited(() => hash(password, OPTIONS));
}

// Verified against when the email is unknown, so an unknown account costs what a known one does.
const NO_USER_HASH =
  "$argon2id$v=19$m=19456,t=2,p=1$m1y6tA/tuzwD5XlwzF2Lsw$1ee2fLoJvfMYWwGsSpabWEiXKQIdOHPtBa0UYUfD8+Q";

export interface Verified {
  matches: boolean;
  /** The stored hash is of an older kind (bcrypt): store `hashPassword` of the password now that it is known. */
  needsUpgrade: boolean;
}

/** Checks a password against a stored hash, or against a dummy when there is none (unknown account). */
export async function verifyPassword(password: string, stored: string | null): Promise<Verified> {
  if (stored?.startsWith("$2")) {
    // bcryptjs splits its work into chunks that yield, but still on this thread: upgraded at the first success.
    const matches = await bcrypt.compare(password, stored);
    return { matches, needsUpgrade: matches };
  }
  const matches = await limited(() => verify(stored ?? NO_USER_HASH, password).catch(() => false));
  return { matches: stored !== null && matches, needsUpgrade: false };
}
