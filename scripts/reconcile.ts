import { reconcileRefunds } from "../lib/payments/reconcile/reconcile";

// `npm run reconcile`: settle every refund whose outcome is unknown by asking the provider, once, now;
// RECONCILE_TENANT_ID limits it to one tenant's refunds.
for (const name of ["DATABASE_URL", "PAYMENT_PROVIDER_URL", "PAYMENT_PROVIDER_SECRET"]) {
  if (!process.env[name]) {
    console.error(`reconcile needs ${name}`);
    process.exit(1);
  }
}
const report = await reconcileRefunds({
  minAgeMs: Number(process.env.RECONCILE_MIN_AGE_MS ?? 0),
  ...(process.env.RECONCILE_TENANT_ID ? { tenantId: process.env.RECONCILE_TENANT_ID } : {}),
});
if (report.paused) {
  console.error(
    `reconcile: did nothing, the provider could not be reached as configured (${report.paused}); check PAYMENT_PROVIDER_URL and PAYMENT_PROVIDER_SECRET`,
  );
  process.exit(2);
}
console.log(
  `reconcile: ${report.examined} examined, ${report.issued} issued, ${report.released} released, ${report.stillUnknown} still unknown, ${report.investigate} need investigation, ${report.madeAfterRelease} made by the provider after their release`,
);
process.exit(0);
