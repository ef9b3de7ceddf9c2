import { readBoundedBody } from "../http";
import { isPlainObject } from "../canonical";
import { isStorableJson, isStorableText } from "../security/input";
import { PUBLIC_CORS } from "./cors";

// What the OAuth endpoints share on the wire: bounded bodies, RFC 6749 §5.2 error bodies, no caching, readable
// from a browser-based client's page (cors.ts).

const MAX_BODY = 8 * 1024;

export const tokenHeaders = { "Cache-Control": "no-store", Pragma: "no-cache", ...PUBLIC_CORS } as const;

export const oauthError = (status: number, error: string, description: string) =>
  Response.json({ error, error_description: description }, { status, headers: tokenHeaders });

/**
 * The form of a form-encoded body, or null for another type, an oversized body, or a field PostgreSQL cannot store
 * (a NUL, `%00`), which would otherwise fail the first query as a 5xx.
 */
export async function readForm(request: Request): Promise<URLSearchParams | null> {
  if (!(request.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded")) return null;
  const body = await readBoundedBody(request, MAX_BODY);
  if (body.truncated) return null;
  const form = new URLSearchParams(new TextDecoder().decode(body.bytes));
  return [...form].every(([name, value]) => isStorableText(name) && isStorableText(value)) ? form : null;
}

/** The JSON object of a JSON body, or undefined for anything else, or for one holding a NUL or an unpaired surrogate. */
export async function readJson(request: Request): Promise<Record<string, unknown> | undefined> {
  const body = await readBoundedBody(request, MAX_BODY);
  if (body.truncated) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body.bytes));
    return isPlainObject(value) && isStorableJson(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a form post comes from this site's own page: its Origin; or, since a page under `Referrer-Policy:
 * no-referrer` posts with `Origin: null`, the browser's own `Sec-Fetch-Site: same-origin`.
 */
export function fromOwnPage(request: Request, issuer: string): boolean {
  const origin = request.headers.get("origin");
  if (origin === issuer) return true;
  return (origin === null || origin === "null") && request.headers.get("sec-fetch-site") === "same-origin";
}
