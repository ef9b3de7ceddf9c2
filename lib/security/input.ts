import { z } from "zod";

// Shapes every id and free text from a client must have before it reaches a query. PostgreSQL refuses a NUL in
// text (and a lone surrogate in JSON), which would otherwise surface as a 5xx for a client's mistake.

const ID = /^[A-Za-z0-9_-]{1,100}$/;

/** Every id this app makes (`newId`, the seed's) is ASCII letters, digits, `_` and `-`, at most 100 long. */
export const isWellFormedId = (value: string): boolean => ID.test(value);

export const IdSchema = z.string().regex(ID, "not a well-formed id");

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether PostgreSQL can store the string as text and inside JSON: no NUL, no unpaired surrogate. */
export const isStorableText = (value: string): boolean => !UNSTORABLE.test(value);

/** `isStorableText` for every string of a parsed JSON value, object keys included. */
export function isStorableJson(value: unknown): boolean {
  if (typeof value === "string") return isStorableText(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (value !== null && typeof value === "object")
    return Object.entries(value).every(([key, inner]) => isStorableText(key) && isStorableJson(inner));
  return true;
}

export const TextSchema = (max: number) =>
  z.string().trim().max(max).refine(isStorableText, "contains a character that cannot be stored");
