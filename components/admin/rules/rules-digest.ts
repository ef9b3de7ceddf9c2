/** The digest a publish's step-up is made for: this exact text as live rules (lib/admin/rules/publishing/publish.ts `rulesItem`). */
export async function rulesDigest(text: string): Promise<string> {
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`live\n${text}`));
  return [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
