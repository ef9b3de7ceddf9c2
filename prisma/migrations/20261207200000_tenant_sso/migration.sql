-- Single sign-on through a tenant's OpenID Connect provider (lib/auth/sso): the provider's settings, its client
-- secret encrypted under SECRETS_KEY, and the provider subjects bound to toolgate people.

-- CreateTable
CREATE TABLE "TenantSso" (
    "tenantId" TEXT NOT NULL,
    "displayName" TEXT NOT NULL,
    "issuer" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "clientSecret" TEXT NOT NULL,
    "emailDomain" TEXT NOT NULL,
    "groupsClaim" TEXT,
    "roleMap" JSONB NOT NULL DEFAULT '{}',
    "required" BOOLEAN NOT NULL DEFAULT false,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TenantSso_pkey" PRIMARY KEY ("tenantId"),
    -- Stored only as lib/secrets.ts seals it, never in plain text.
    CONSTRAINT "TenantSso_clientSecret_encrypted_check" CHECK ("clientSecret" LIKE 'enc:v1:%')
);

-- CreateTable
CREATE TABLE "SsoIdentity" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "boundBy" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSignInAt" TIMESTAMPTZ(3),

    CONSTRAINT "SsoIdentity_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "SsoIdentity_boundBy_check" CHECK ("boundBy" IN ('verified-email', 'admin'))
);

-- CreateIndex
CREATE UNIQUE INDEX "TenantSso_emailDomain_key" ON "TenantSso"("emailDomain");

-- CreateIndex
CREATE UNIQUE INDEX "SsoIdentity_tenantId_issuer_subject_key" ON "SsoIdentity"("tenantId", "issuer", "subject");

-- CreateIndex
CREATE UNIQUE INDEX "SsoIdentity_tenantId_issuer_userId_key" ON "SsoIdentity"("tenantId", "issuer", "userId");

-- AddForeignKey
ALTER TABLE "TenantSso" ADD CONSTRAINT "TenantSso_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SsoIdentity" ADD CONSTRAINT "SsoIdentity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
