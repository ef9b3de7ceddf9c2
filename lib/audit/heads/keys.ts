import { createHmac } from "node:crypto";
import { env, keyBytes } from "../../env";

// The seals' keys come from the environment only: the database holds a key's id, never the key, so someone who can
// rewrite every row and every seal still cannot make a seal that verifies. Rotation: a new AUDIT_SEAL_KEY with a
// new AUDIT_SEAL_KEY_ID seals from then on; the old key moves to AUDIT_SEAL_RETIRED_KEYS to verify what it sealed.

export interface SealKey {
  id: string;
  secret: Buffer;
}

function parseKey(text: string, variable: string): Buffer {
  const bytes = keyBytes(text);
  if (bytes.length !== 32) throw new Error(`${variable} must be 32 bytes, in base64 or hex`);
  return bytes;
}

export function sealingKey(): SealKey {
  const settings = env();
  if (!settings.AUDIT_SEAL_KEY)
    throw new Error(
      "AUDIT_SEAL_KEY is not set: 32 random bytes in base64 (openssl rand -base64 32) are needed to seal and verify the audit logs",
    );
  return { id: settings.AUDIT_SEAL_KEY_ID, secret: parseKey(settings.AUDIT_SEAL_KEY, "AUDIT_SEAL_KEY") };
}

/** The configured key with this id, current or retired; null when none is. */
export function keyById(id: string): SealKey | null {
  const settings = env();
  if (settings.AUDIT_SEAL_KEY && settings.AUDIT_SEAL_KEY_ID === id) return sealingKey();
  for (const entry of settings.AUDIT_SEAL_RETIRED_KEYS.split(",")) {
    const at = entry.indexOf(":");
    if (at > 0 && entry.slice(0, at).trim() === id)
      return { id, secret: parseKey(entry.slice(at + 1).trim(), `AUDIT_SEAL_RETIRED_KEYS (key ${id})`) };
  }
  return null;
}

export function hmacHex(key: SealKey, text: string): string {
  return createHmac("sha256", key.secret).update(text).digest("hex");
}
