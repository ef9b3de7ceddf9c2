import { sealLogs, verifyTenant, type VerifyResult } from "@/lib/audit/seal";

/**
 * Runs the sealing job until every row of the tenant's decision log, and with `audit` its audit log too, is sealed
 * (other test files append and seal meanwhile); returns the decision log's verification. `allowUnkeyed` for a
 * tenant with seals made before seals were keyed: verified without it, the chain stops at them and counts no row as
 * not yet sealed, so a run another file's sealer held off would pass for done.
 */
export async function sealAll(tenantId: string, { audit = false, allowUnkeyed = false } = {}): Promise<VerifyResult> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await sealLogs();
    const [decision, auditLog] = await Promise.all([
      verifyTenant(tenantId, { allowUnkeyed }),
      audit ? verifyTenant(tenantId, { log: "audit" }) : null,
    ]);
    if (decision.rowsNotYetSealed === 0 && (auditLog?.rowsNotYetSealed ?? 0) === 0) return decision;
    if (Date.now() > deadline) throw new Error(`the logs of ${tenantId} were not sealed in 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
