-- The metrics scrape counts the pending approval requests of all tenants and finds the oldest; without this
-- index each scrape of each instance reads the whole table.

-- CreateIndex
CREATE INDEX "ApprovalRequest_status_createdAt_idx" ON "ApprovalRequest"("status", "createdAt");
