/**
 * Why a passkey prompt failed, in words that say what to do. Browsers refuse passkeys on an IP address (WebAuthn
 * needs a name), which is how the app is first opened (http://127.0.0.1:3000): retrying there cannot help.
 */
export function passkeyFailure(location: { hostname: string; port: string; pathname: string }): string {
  const named = namedAddress(location);
  if (named) return `Passkeys need the app's name, not an IP address: open ${named} and try there.`;
  return "The passkey prompt was closed or failed. Try again.";
}

/** On an IP address, the same page under the app's name (localhost), where passkeys work; null where they already do. */
export function namedAddress(location: { hostname: string; port: string; pathname: string }): string | null {
  const onAddress = /^\d{1,3}(\.\d{1,3}){3}$/.test(location.hostname) || location.hostname.startsWith("[");
  if (!onAddress) return null;
  const port = location.port ? `:${location.port}` : "";
  return `http://localhost${port}${location.pathname}`;
}
