import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { env, keyBytes } from "../env";

// Secrets the host must use again (a tenant's webhook URL and signing secret) are stored encrypted with
// AES-256-GCM under SECRETS_KEY, never in plain text. Each value is bound to where it is stored (`context`, e.g.
// "Tenant.webhookSecret:t_acme"), so a ciphertext copied to another tenant or column does not open. Secrets the
// host only compares (API keys, passwords) are hashed instead, elsewhere.

const PREFIX = "enc:v1:";
const NONCE_BYTES = 12;
// Pinned: GCM checks only as many tag bytes as it is given, so a value cut to a 4-byte tag could be forged by trying.
const TAG_BYTES = 16;

function key(): Buffer {
  const text = env().SECRETS_KEY;
  if (!text)
    throw new Error(
      "SECRETS_KEY is not set: 32 random bytes in base64 (openssl rand -base64 32) are needed to use stored secrets",
    );
  const bytes = keyBytes(text);
  if (bytes.length !== 32) throw new Error("SECRETS_KEY must be 32 bytes, in base64 or hex");
  return bytes;
}

export function isEncrypted(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

export function encryptSecret(plain: string, context: string): string {
  const iv = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key(), iv, { authTagLength: TAG_BYTES }).setAAD(Buffer.from(context));
  const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `${PREFIX}${[iv, cipher.getAuthTag(), sealed].map((part) => part.toString("base64url")).join(".")}`;
}

export function decryptSecret(stored: string, context: string): string {
  const column = context.split(":")[0];
  if (!isEncrypted(stored)) throw new Error(`${column} is stored in plain text: run npm run secrets:encrypt`);
  const parts = stored.slice(PREFIX.length).split(".");
  const [iv, tag, sealed] = parts.map((part) => Buffer.from(part, "base64url"));
  if (parts.length !== 3 || iv.length !== NONCE_BYTES || tag.length !== TAG_BYTES)
    throw new Error(
      `${column} is not a value this server stored: it needs a ${NONCE_BYTES}-byte nonce and a ${TAG_BYTES}-byte tag; set it again`,
    );
  const decipher = createDecipheriv("aes-256-gcm", key(), iv, { authTagLength: TAG_BYTES })
    .setAAD(Buffer.from(context))
    .setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed), decipher.final()]).toString("utf8");
}

export const webhookUrlContext = (tenantId: string) => `Tenant.webhookUrl:${tenantId}`;
export const webhookSecretContext = (tenantId: string) => `Tenant.webhookSecret:${tenantId}`;
