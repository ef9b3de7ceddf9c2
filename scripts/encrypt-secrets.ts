import { db } from "../lib/db";
import { encryptSecret, isEncrypted, webhookSecretContext, webhookUrlContext } from "../lib/security/secrets";

// `npm run secrets:encrypt`: encrypts under SECRETS_KEY every tenant webhook URL and secret (and every queued
// webhook delivery's URL) still stored in plain text from before they were encrypted, then has PostgreSQL check
// that none is left. Safe to run again.
if (!process.env.DATABASE_URL || !process.env.SECRETS_KEY) {
  console.error("secrets:encrypt needs DATABASE_URL and SECRETS_KEY");
  process.exit(2);
}
const seal = (value: string | null, context: string) =>
  value === null || isEncrypted(value) ? value : encryptSecret(value, context);
let changed = 0;
for (const tenant of await db.tenant.findMany({ select: { id: true, webhookUrl: true, webhookSecret: true } })) {
  const webhookUrl = seal(tenant.webhookUrl, webhookUrlContext(tenant.id));
  const webhookSecret = seal(tenant.webhookSecret, webhookSecretContext(tenant.id));
  if (webhookUrl === tenant.webhookUrl && webhookSecret === tenant.webhookSecret) continue;
  await db.tenant.update({ where: { id: tenant.id }, data: { webhookUrl, webhookSecret }, select: { id: true } });
  changed++;
}
for (const message of await db.outboxMessage.findMany({
  where: { kind: "webhook", status: { in: ["pending", "sending"] }, NOT: { recipient: { startsWith: "enc:v1:" } } },
  select: { id: true, tenantId: true, recipient: true },
})) {
  await db.outboxMessage.update({
    where: { id: message.id },
    data: { recipient: encryptSecret(message.recipient, webhookUrlContext(message.tenantId)) },
    select: { id: true },
  });
  changed++;
}
await db.$executeRawUnsafe(`ALTER TABLE "Tenant" VALIDATE CONSTRAINT "Tenant_webhook_encrypted_check"`);
console.log(`secrets:encrypt: ${changed} rows encrypted; no plain webhook URL or secret is left`);
await db.$disconnect();
process.exit(0);
