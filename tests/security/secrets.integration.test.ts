import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { setWebhook } from "@/lib/admin/policy/webhook";
import { db } from "@/lib/db";
import { decryptSecret, encryptSecret, webhookSecretContext, webhookUrlContext } from "@/lib/security/secrets";
import { setWebhookApproved } from "../support/admin-changes";
import { noProof } from "../support/step-up";
import { createWorld } from "../support/world";

// Which secrets the schema stores: API keys and passwords only as hashes (tests/admin), a tenant's webhook URL and
// signing secret (which the host must use again) encrypted under SECRETS_KEY.

describe("stored secrets", () => {
  it("the webhook is stored encrypted, bound to its tenant and column, and its change is audited without it", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    await setWebhookApproved(world, {
      url: "https://203.0.113.10/T000/B000/token-in-the-url",
      secret: "whsec_0123456789abcdef",
    });
    const stored = await db.tenant.findUniqueOrThrow({
      where: { id: world.tenantId },
      select: { webhookUrl: true, webhookSecret: true },
    });
    expect(decryptSecret(stored.webhookUrl!, webhookUrlContext(world.tenantId))).toBe(
      "https://203.0.113.10/T000/B000/token-in-the-url",
    );
    expect(decryptSecret(stored.webhookSecret!, webhookSecretContext(world.tenantId))).toBe("whsec_0123456789abcdef");
    // Copied to another tenant, or to the other column, it does not open.
    expect(() => decryptSecret(stored.webhookSecret!, webhookSecretContext(world.otherTenantId))).toThrow();
    expect(() => decryptSecret(stored.webhookSecret!, webhookUrlContext(world.tenantId))).toThrow();
    const audit = await db.auditLog.findMany({ where: { tenantId: world.tenantId, action: "webhook.set" } });
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit.map((row) => row.detail))).not.toMatch(/token-in-the-url|whsec_/);
    await setWebhook(admin, null, await noProof(admin.id));
    expect(
      await db.tenant.findUniqueOrThrow({
        where: { id: world.tenantId },
        select: { webhookUrl: true, webhookSecret: true },
      }),
    ).toEqual({ webhookUrl: null, webhookSecret: null });
  });

  it("a stored value whose authentication tag is cut short is refused, not checked on its first bytes only", () => {
    const context = webhookSecretContext("t_tag");
    const stored = encryptSecret("whsec_0123456789abcdef", context);
    const [iv, tag, sealed] = stored.slice("enc:v1:".length).split(".");
    expect(Buffer.from(tag, "base64url")).toHaveLength(16);
    for (const bytes of [4, 8, 12, 15]) {
      const short = Buffer.from(tag, "base64url").subarray(0, bytes).toString("base64url");
      expect(() => decryptSecret(`enc:v1:${iv}.${short}.${sealed}`, context)).toThrow(
        "Tenant.webhookSecret is not a value this server stored: it needs a 12-byte nonce and a 16-byte tag; set it again",
      );
    }
    expect(() => decryptSecret(`enc:v1:${iv}.${tag}`, context)).toThrow(/16-byte tag/);
    expect(decryptSecret(stored, context)).toBe("whsec_0123456789abcdef");
  });

  it("the database refuses a plain-text webhook URL or secret", async () => {
    const world = await createWorld();
    await expect(
      db.tenant.update({ where: { id: world.tenantId }, data: { webhookSecret: "whsec_plain" } }),
    ).rejects.toThrow(/Tenant_webhook_encrypted_check/);
    await expect(
      db.tenant.update({ where: { id: world.tenantId }, data: { webhookUrl: "https://hooks.example.test/x" } }),
    ).rejects.toThrow(/Tenant_webhook_encrypted_check/);
  });

  it("npm run secrets:encrypt encrypts values stored in plain text before, and a plain value is never used", async () => {
    const world = await createWorld();
    // As a database from before this change holds it (the constraint does not apply to the rows it found).
    await db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`ALTER TABLE "Tenant" DROP CONSTRAINT "Tenant_webhook_encrypted_check"`);
      await tx.$executeRaw`UPDATE "Tenant" SET "webhookUrl" = 'https://hooks.example.test/old', "webhookSecret" = 'whsec_old_plain' WHERE "id" = ${world.tenantId}`;
      await tx.$executeRawUnsafe(`ALTER TABLE "Tenant" ADD CONSTRAINT "Tenant_webhook_encrypted_check"
        CHECK (("webhookUrl" IS NULL OR "webhookUrl" LIKE 'enc:v1:%') AND ("webhookSecret" IS NULL OR "webhookSecret" LIKE 'enc:v1:%')) NOT VALID`);
    });
    expect(() => decryptSecret("whsec_old_plain", webhookSecretContext(world.tenantId))).toThrow(
      /plain text: run npm run secrets:encrypt/,
    );
    const run = spawnSync(
      process.execPath,
      [path.join("node_modules", "tsx", "dist", "cli.mjs"), "--conditions=react-server", "scripts/encrypt-secrets.ts"],
      { encoding: "utf8", env: process.env },
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const stored = await db.tenant.findUniqueOrThrow({
      where: { id: world.tenantId },
      select: { webhookUrl: true, webhookSecret: true },
    });
    expect(decryptSecret(stored.webhookUrl!, webhookUrlContext(world.tenantId))).toBe("https://hooks.example.test/old");
    expect(decryptSecret(stored.webhookSecret!, webhookSecretContext(world.tenantId))).toBe("whsec_old_plain");
    const [constraint] = await db.$queryRaw<
      { validated: boolean }[]
    >`SELECT convalidated AS "validated" FROM pg_constraint WHERE conname = 'Tenant_webhook_encrypted_check'`;
    expect(constraint.validated).toBe(true);
  });

  it("each encryption of one value differs, and a missing or short key is named", async () => {
    expect(encryptSecret("same", "ctx")).not.toBe(encryptSecret("same", "ctx"));
    const key = process.env.SECRETS_KEY;
    try {
      delete process.env.SECRETS_KEY;
      expect(() => encryptSecret("x", "ctx")).toThrow(/SECRETS_KEY is not set/);
      process.env.SECRETS_KEY = "c2hvcnQ=";
      expect(() => encryptSecret("x", "ctx")).toThrow(/SECRETS_KEY must be 32 bytes/);
    } finally {
      process.env.SECRETS_KEY = key;
    }
  });
});
