// The security headers of every answer. Pages get a CSP with a fresh nonce (Next.js puts it on its own scripts);
// other answers (API, files) get a CSP that allows nothing, since nothing in them should ever run.

/** Headers every answer carries, whatever it is. */
export const STATIC_SECURITY_HEADERS: Record<string, string> = {
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  // Approval links and ids in paths never leave in a Referer.
  "Referrer-Policy": "no-referrer",
  // Passkeys (publickey-credentials-*) stay allowed for this origin; everything a support tool never needs is off.
  "Permissions-Policy":
    "camera=(), microphone=(), geolocation=(), payment=(), usb=(), serial=(), hid=(), browsing-topics=()",
  "Cross-Origin-Opener-Policy": "same-origin",
};

export const HSTS = "max-age=63072000; includeSubDomains";

/**
 * `formTarget`: one more place a form's answer may redirect to (the OAuth consent page's client, whose redirect
 * URI the form's server-side handler checks before redirecting there).
 */
export function pagePolicy(nonce: string, options: { dev: boolean; https: boolean; formTarget?: string }): string {
  return [
    "default-src 'self'",
    // React's development build rebuilds server error stacks with eval; production never needs it.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${options.dev ? " 'unsafe-eval'" : ""}`,
    // The development server injects styles without a nonce; production styles are files or carry the nonce.
    options.dev ? "style-src 'self' 'unsafe-inline'" : `style-src 'self' 'nonce-${nonce}'`,
    // Style attributes (React's `style` prop) cannot run script.
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    `form-action 'self'${options.formTarget ? ` ${options.formTarget}` : ""}`,
    "frame-ancestors 'none'",
    ...(options.https ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

export const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

/** The CSP source for a redirect URI: its origin for http(s), its scheme for an app's own (`cursor:`); else null. */
export function formTargetOf(redirectUri: string | null): string | undefined {
  if (!redirectUri) return undefined;
  try {
    const url = new URL(redirectUri);
    if (url.protocol === "https:" || url.protocol === "http:") return url.origin;
    return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
  } catch {
    return undefined;
  }
}
