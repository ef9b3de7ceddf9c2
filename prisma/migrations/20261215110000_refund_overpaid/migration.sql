-- A watched released refund the provider made after all, when the order had been refunded again beyond its total
-- meanwhile: the books cannot count it, so it is listed for the tenant's supervisors until one of them records what
-- was done with the customer.
ALTER TABLE "Refund" ADD COLUMN "overpaidAt" TIMESTAMPTZ(3),
  ADD COLUMN "overpaidClosedAt" TIMESTAMPTZ(3),
  ADD COLUMN "overpaidClosedById" TEXT;

CREATE INDEX "Refund_overpaid_open_idx" ON "Refund"("tenantId", "overpaidAt")
  WHERE "overpaidAt" IS NOT NULL AND "overpaidClosedAt" IS NULL;
