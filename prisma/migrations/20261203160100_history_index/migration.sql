-- The history page: decided and expired requests newest decision first, paged by (decidedAt, id), filtered by
-- decider or requester (docs/BENCHMARKS.md, scale).

-- CreateIndex
CREATE INDEX "ApprovalRequest_history_idx" ON "ApprovalRequest"("tenantId", "decidedAt" DESC, "id" DESC) WHERE "status" <> 'pending';
