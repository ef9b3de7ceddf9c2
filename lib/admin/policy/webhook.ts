import { z } from "zod";
import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { storedDigest } from "../../canonical";
import { db, transaction } from "../../db";
import { checkOutboundUrl, OutboundRefused } from "../../security/outbound";
import { decryptSecret, encryptSecret, webhookSecretContext, webhookUrlContext } from "../../security/secrets";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { insertAudit, type Admin } from "../sql";
import { lockTenantWebhook, setTenantWebhook, tenantHasWebhook } from "./sql";

export const WebhookSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(2000),
  secret: z.string().min(16).max(200),
});
export type WebhookInput = z.infer<typeof WebhookSchema>;

export type WebhookResult =
  | { ok: true; held: HeldChange | null }
  | { ok: false; code: OutboundRefused["code"] | "step-up.required"; message: string };

/**
 * Removes the tenant's approval webhook at once (tightening), or sets it: every new request's details would go to
 * that address, so a URL reaching a loopback, private, link-local or metadata address, or (in production) a plain
 * http one, is refused first, then the
 * admin's step-up proof for exactly this URL is consumed and, as the one classifier says, the change waits for a
 * second admin or the delay (docs/decisions/015). URL and secret are stored encrypted; the audit names neither.
 */
export async function setWebhook(
  admin: Admin,
  input: WebhookInput | null,
  holder: StepUpHolder,
): Promise<WebhookResult> {
  if (!input) {
    await transaction(async (tx) => {
      await setTenantWebhook(tx, admin.tenantId, { webhookUrl: null, webhookSecret: null });
      await insertAudit(tx, admin, "webhook.removed", {});
    });
    return { ok: true, held: null };
  }
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
  return transaction(async (tx) => {
    const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.webhook", url: input.url });
    if (!stepUp)
      return {
        ok: false,
        code: "step-up.required",
        message: "Setting the webhook needs you to confirm it is you first. Nothing was changed.",
      };
    const stored = await lockTenantWebhook(tx, admin.tenantId);
    const change = {
      host: new URL(input.url).host,
      url: encryptSecret(input.url, webhookUrlContext(admin.tenantId)),
      secret: encryptSecret(input.secret, webhookSecretContext(admin.tenantId)),
    };
    const base = {
      host: stored === null ? null : new URL(decryptSecret(stored, webhookUrlContext(admin.tenantId))).host,
      stored: storedDigest(stored),
    };
    if (classifyAdminChange({ kind: "webhook.set" }) === "needs-second-admin")
      return { ok: true, held: await holdChange(tx, admin, { kind: "webhook", change, base }, stepUp) };
    await setTenantWebhook(tx, admin.tenantId, { webhookUrl: change.url, webhookSecret: change.secret });
    await insertAudit(tx, admin, "webhook.set", { host: change.host, stepUp });
    return { ok: true, held: null };
  });
}

export async function hasWebhook(tenantId: string): Promise<boolean> {
  return tenantHasWebhook(db, tenantId);
}
