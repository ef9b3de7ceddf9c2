import { timingSafeEqual } from "node:crypto";

/**
 * Whether two secrets (a token, a signature, a hash) are the same, in a time that does not depend on where they
 * first differ: a caller learns nothing from how long a wrong guess took. Only the length may show.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
