-- Upstream MCP servers whose tools toolgate guards (issue 36): the servers, their tools' pinned definitions (by
-- hash, with the last reviewed definition kept for the diff of a change) and the calls forwarded to them, each
-- recorded before it is sent.

-- CreateTable
CREATE TABLE "UpstreamServer" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "transport" TEXT NOT NULL,
    "url" TEXT,
    "headerName" TEXT,
    "secret" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "syncedAt" TIMESTAMPTZ(3),

    CONSTRAINT "UpstreamServer_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UpstreamTool" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "definition" JSONB NOT NULL,
    "definitionHash" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reviewedDefinition" JSONB,
    "reviewedHash" TEXT,
    "verdict" TEXT NOT NULL,
    "reviewedById" TEXT,
    "reviewedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UpstreamTool_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UpstreamCall" (
    "toolCallId" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "definitionHash" TEXT NOT NULL,
    "idempotencyKey" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "sentAt" TIMESTAMPTZ(3),
    "answeredAt" TIMESTAMPTZ(3),
    "resultDigest" TEXT,
    "resolvedById" TEXT,
    "resolvedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UpstreamCall_pkey" PRIMARY KEY ("toolCallId")
);

-- CreateIndex
CREATE UNIQUE INDEX "UpstreamServer_tenantId_name_key" ON "UpstreamServer"("tenantId", "name");

-- CreateIndex
CREATE UNIQUE INDEX "UpstreamTool_serverId_name_key" ON "UpstreamTool"("serverId", "name");

-- CreateIndex
CREATE INDEX "UpstreamTool_tenantId_status_idx" ON "UpstreamTool"("tenantId", "status");

-- CreateIndex
CREATE INDEX "UpstreamCall_tenantId_status_idx" ON "UpstreamCall"("tenantId", "status");

-- AddForeignKey
ALTER TABLE "UpstreamServer" ADD CONSTRAINT "UpstreamServer_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UpstreamTool" ADD CONSTRAINT "UpstreamTool_serverId_fkey" FOREIGN KEY ("serverId") REFERENCES "UpstreamServer"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
