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

    CONSTRAINT "ChatChannel_pkey" PRIMARY KEY ("tenantId","provider")
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
