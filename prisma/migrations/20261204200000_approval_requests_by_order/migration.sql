-- Each card of the approval queue names the other pending requests on its order and counts them. Without this
-- index both read every pending request of the tenant to find one order's (docs/BENCHMARKS.md, scale).

-- CreateIndex
CREATE INDEX "ApprovalRequest_tenantId_orderId_status_createdAt_idx" ON "ApprovalRequest"("tenantId", "orderId", "status", "createdAt");
