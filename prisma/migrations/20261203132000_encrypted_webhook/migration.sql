-- A tenant's webhook URL and signing secret are stored encrypted (lib/secrets.ts), never in plain text. NOT VALID:
-- the database refuses a plain value from now on; values stored before are encrypted in place by
-- `npm run secrets:encrypt`, which then validates the constraint.

-- AlterTable
ALTER TABLE "Tenant" ADD CONSTRAINT "Tenant_webhook_encrypted_check"
    CHECK (("webhookUrl" IS NULL OR "webhookUrl" LIKE 'enc:v1:%') AND ("webhookSecret" IS NULL OR "webhookSecret" LIKE 'enc:v1:%')) NOT VALID;
