import { env } from "../env";

// What the app believes about a request's origin and shape before any route sees it.

/** Headers a reverse proxy sets; a client could set them too, so they are dropped unless TRUST_PROXY says a proxy does. */
export const FORWARDED_HEADERS = [
  "forwarded",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-port",
  "x-real-ip",
];

/**
 * The client's address: with no trusted proxy, the socket's (Next.js fills `X-Forwarded-For` with it once the
 * proxy has dropped the client's own); behind n trusted proxies, the address the outermost one saw.
 */
export function clientAddress(headers: Headers): string {
  const hops = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((hop) => hop.trim())
    .filter(Boolean);
  const address = hops[hops.length - Math.max(env().TRUST_PROXY, 1)] ?? hops[0] ?? "unknown";
  return address.slice(0, 64);
}

const PERCENT = /%(?![0-9A-Fa-f]{2})/;

/**
 * Why a request target cannot be served, or null: a NUL (PostgreSQL refuses it in text), a broken percent escape, or an escape that does not
 * decode to UTF-8 (%ff). Refused here so no route ever decodes it (Next.js would answer a bare 500).
 */
export function malformedTarget(target: string): string | null {
  if (PERCENT.test(target)) return "a % not followed by two hex digits";
  let decoded: string;
  try {
    decoded = decodeURIComponent(target.replace(/\+/g, " "));
  } catch {
    return "a percent escape that is not UTF-8";
  }
  if (decoded.includes("\u0000")) return "a NUL byte";
  return null;
}

/** Whether an `Origin` header's host may send a server action: the request's own host or a configured one. */
export function actionOriginAllowed(origin: string | null, host: string | null): boolean {
  if (origin === null) return true;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return false;
  }
  if (originHost !== "" && originHost === host) return true;
  return env().SERVER_ACTIONS_ALLOWED_ORIGINS.some((allowed) => hostMatches(originHost, allowed));
}

// The same two wildcards as Next.js's serverActions.allowedOrigins: `*` one label, `**` one or more.
function hostMatches(host: string, pattern: string): boolean {
  if (pattern === host) return true;
  const [patternLabels, hostLabels] = [pattern.split("."), host.split(".")];
  if (patternLabels[0] === "**")
    return (
      hostLabels.length > patternLabels.length - 1 &&
      hostLabels.slice(-(patternLabels.length - 1)).join(".") === patternLabels.slice(1).join(".")
    );
  return (
    patternLabels.length === hostLabels.length &&
    patternLabels.every((label, index) => label === "*" || label === hostLabels[index])
  );
}
