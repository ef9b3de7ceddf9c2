-- A released refund the provider made after all is issued; when its order had been refunded again meanwhile, the
-- provider has paid more than the order's total, which the order's refunded total (checked against its total) cannot
-- show. What it paid beyond is kept on the refund, and the refund is listed for the tenant's supervisors until one of
-- them records what was done with the customer.
ALTER TABLE "Refund" ADD COLUMN "overpaidCents" INTEGER,
  ADD COLUMN "overpaidAt" TIMESTAMPTZ(3),
  ADD COLUMN "overpaidClosedAt" TIMESTAMPTZ(3),
  ADD COLUMN "overpaidClosedById" TEXT;

CREATE INDEX "Refund_overpaid_open_idx" ON "Refund"("tenantId", "overpaidAt")
  WHERE "overpaidAt" IS NOT NULL AND "overpaidClosedAt" IS NULL;
