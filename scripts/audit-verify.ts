import { db } from "../lib/db";
import { verifyTenant } from "../lib/audit/seal";

// `npm run audit:verify -- [tenant ...]`: checks each tenant's decision-log seals against the rows as they are now
// (every tenant with a seal when none is named) and names the first row altered, removed, reordered or added.
// Exits 1 when any tenant's log fails.
if (!process.env.DATABASE_URL) {
  console.error("audit:verify needs DATABASE_URL");
  process.exit(2);
}
const named = process.argv.slice(2);
const tenants = named.length
  ? named
  : (
      await db.decisionSeal.findMany({
        distinct: ["tenantId"],
        select: { tenantId: true },
        orderBy: { tenantId: "asc" },
      })
    ).map((row) => row.tenantId);
let failed = 0;
for (const tenantId of tenants) {
  const result = await verifyTenant(tenantId);
  if (result.problem) {
    failed++;
    console.log(
      `${tenantId}: FAILED at seal ${result.problem.seq}: ${result.problem.kind}${"rowId" in result.problem ? ` row ${result.problem.rowId}` : ""}: ${result.problem.message}`,
    );
  } else {
    console.log(
      `${tenantId}: ok, ${result.seals} seals, ${result.rowsSealed} rows sealed, ${result.rowsNotYetSealed} not sealed yet, head ${result.head}`,
    );
  }
}
await db.$disconnect();
process.exit(failed ? 1 : 0);
