import { randomBytes } from "node:crypto";

/** Opaque, unguessable ids: a prefix that says what it is, then 128 random bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString("base64url")}`;
}
