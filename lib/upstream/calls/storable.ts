// An upstream's answer is stored (jsonb) before the agent reads it, and jsonb refuses some text JSON allows: a NUL
// character, half of a surrogate pair, nesting deeper than its parser's stack. Such an answer is still an answer.

/** The deepest an upstream's answer may nest to be passed on; a deeper one is replaced by a note. */
export const MAX_STORED_DEPTH = 64;

/** A NUL, or a surrogate without its other half. */
const REFUSED = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const text = (value: string) => value.replace(REFUSED, "\uFFFD");

/**
 * A copy of the JSON value `value` in which every string (object keys included) has each character jsonb refuses
 * replaced by U+FFFD; undefined when it nests deeper than `MAX_STORED_DEPTH`.
 */
export function storable(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return text(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_STORED_DEPTH) return undefined;
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  const copy: [string | number, unknown][] = [];
  for (const [key, item] of entries) {
    const stored = storable(item, depth + 1);
    if (stored === undefined && item !== undefined) return undefined;
    copy.push([typeof key === "string" ? text(key) : key, stored]);
  }
  return Array.isArray(value) ? copy.map(([, item]) => item) : Object.fromEntries(copy);
}
