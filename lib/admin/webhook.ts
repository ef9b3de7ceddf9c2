import { z } from "zod";
import { db, transaction } from "../db";
import { checkOutboundUrl, OutboundRefused } from "../security/outbound";
import { encryptSecret, webhookSecretContext, webhookUrlContext } from "../secrets";
import { insertAudit, setTenantWebhook, tenantHasWebhook, type Admin } from "./sql";

export const WebhookSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(2000),
  secret: z.string().min(16).max(200),
});
export type WebhookInput = z.infer<typeof WebhookSchema>;

/**
 * Sets (or with null, removes) the tenant's approval webhook; URL and secret are stored encrypted, the audit names
 * neither. A URL reaching a loopback, private, link-local or metadata address, or (in production) a plain http one,
 * is refused and nothing is stored.
 */
export async function setWebhook(
  admin: Admin,
  input: WebhookInput | null,
): Promise<{ ok: true } | { ok: false; code: OutboundRefused["code"]; message: string }> {
  if (input) {
    try {
      await checkOutboundUrl(input.url, { signed: true });
    } catch (error) {
      if (!(error instanceof OutboundRefused)) throw error;
      const remedy = error.code === "outbound.plain-http" ? "its https:// address" : "the receiver's public address";
      return {
        ok: false,
        code: error.code,
        message: `The webhook URL cannot be used: ${error.message}. Use ${remedy}.`,
      };
    }
  }
  const data = input
    ? {
        webhookUrl: encryptSecret(input.url, webhookUrlContext(admin.tenantId)),
        webhookSecret: encryptSecret(input.secret, webhookSecretContext(admin.tenantId)),
      }
    : { webhookUrl: null, webhookSecret: null };
  await transaction(async (tx) => {
    await setTenantWebhook(tx, admin.tenantId, data);
    await insertAudit(
      tx,
      admin,
      input ? "webhook.set" : "webhook.removed",
      input ? { host: new URL(input.url).host } : {},
    );
  });
  return { ok: true };
}

export async function hasWebhook(tenantId: string): Promise<boolean> {
  return tenantHasWebhook(db, tenantId);
}
