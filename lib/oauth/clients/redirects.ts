// Redirect URIs (OAuth 2.1 §2.3.1, RFC 8252 §7.3): matched exactly, except that a loopback address's port may
// differ, since a native client listens on whatever port it gets.

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);
// Schemes that could run code or read files where a redirect lands.
const REFUSED_SCHEMES = new Set(["javascript:", "data:", "file:", "vbscript:", "blob:", "about:"]);

const parse = (value: string): URL | null => {
  try {
    return new URL(value);
  } catch {
    return null;
  }
};

export const isLoopback = (url: URL) => url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);

/**
 * Whether a client may register this redirect URI: https, http on a loopback address, or a native app's own
 * scheme (e.g. `cursor://…`); never with a fragment, never a scheme that runs code.
 */
export function acceptableRedirectUri(value: string): boolean {
  const url = parse(value);
  if (!url || value.length > 2000 || url.hash || value.includes("#")) return false;
  if (url.username || url.password) return false;
  if (url.protocol === "https:") return true;
  if (url.protocol === "http:") return isLoopback(url);
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) && !REFUSED_SCHEMES.has(url.protocol);
}

/** Whether the requested redirect URI is one the client registered (loopback ports aside). */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const asked = parse(requested);
  if (!asked || !isLoopback(asked)) return false;
  return registered.some((candidate) => {
    const known = parse(candidate);
    return (
      known !== null &&
      isLoopback(known) &&
      known.hostname === asked.hostname &&
      known.pathname === asked.pathname &&
      known.search === asked.search
    );
  });
}
