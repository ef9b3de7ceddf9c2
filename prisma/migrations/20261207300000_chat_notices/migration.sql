-- Held calls announced in Slack and Microsoft Teams (docs/SPEC.md, "Slack and Teams"): a tenant's chat channels,
-- their secrets encrypted under SECRETS_KEY, and each announcement (for Slack the message's channel and ts, so the
-- decision, escalation or expiry of the call updates that same message).

-- CreateTable
CREATE TABLE "ChatChannel" (
    "tenantId" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "channel" TEXT,
    "secret" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ChatChannel_pkey" PRIMARY KEY ("tenantId","provider"),
    CONSTRAINT "ChatChannel_provider_check" CHECK ("provider" IN ('slack', 'teams')),
    -- Never in plain text: a token or URL stored by anything but lib/secrets.ts is refused.
    CONSTRAINT "ChatChannel_secret_encrypted_check" CHECK ("secret" LIKE 'enc:v1:%'),
    CONSTRAINT "ChatChannel_slack_channel_check" CHECK (("provider" = 'slack') = ("channel" IS NOT NULL))
);

-- CreateTable
CREATE TABLE "ChatNotice" (
    "approvalId" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "channel" TEXT,
    "ts" TEXT,
    "queuedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "postedAt" TIMESTAMPTZ(3),
    "shownAt" TIMESTAMPTZ(3),

    CONSTRAINT "ChatNotice_pkey" PRIMARY KEY ("approvalId","provider")
);
