-- The history view (decided and expired, newest first) and the expiry sweep (pending past expiresAt), which
-- otherwise scan every request of the tenant (docs/BENCHMARKS.md, scale).

-- CreateIndex
CREATE INDEX "ApprovalRequest_tenantId_createdAt_idx" ON "ApprovalRequest"("tenantId", "createdAt");

-- CreateIndex
CREATE INDEX "ApprovalRequest_tenantId_status_expiresAt_idx" ON "ApprovalRequest"("tenantId", "status", "expiresAt");
