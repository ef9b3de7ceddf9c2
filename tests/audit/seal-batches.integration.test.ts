import { describe, expect, it } from "vitest";
import { findTxidAtOffset } from "@/lib/audit/sql";
import { db, transaction, type Tx } from "@/lib/db";
import { anaConversation, createWorld } from "../support/world";

// One sealing run seals at most about 5,000 rows (lib/audit/seal.ts): it cuts its range at the txid that many rows
// in. The cut must count rows in txid order as numbers. Sorted as text, "10000000000000" comes before
// "9999999999995", and a run's batch could span nearly every unsealed row (a bench run sealed 54,238 in one go).
// Real transaction ids cannot be chosen, so the rows here carry ids far beyond any this database will reach, written
// with the log's triggers off (as only a test may), and are removed the same way.

const AROUND = 10_000_000_000_000;
const TXIDS = Array.from({ length: 10 }, (_, index) => AROUND - 5 + index);

describe("the sealing job's batches", () => {
  it("cut the range at the row that many in, counting transaction ids as numbers across a power of ten", async () => {
    const world = await createWorld();
    const conversationId = await anaConversation(world, [], [], `conv_batches_${world.tenantId}`);
    const asTest = async (work: (tx: Tx) => Promise<unknown>) =>
      transaction(async (tx) => {
        await tx.$executeRaw`SET LOCAL session_replication_role = replica`;
        await work(tx);
      });
    await asTest(async (tx) => {
      for (const txid of TXIDS)
        await tx.$executeRaw`
          INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "latencyMs", "txid")
          VALUES (${world.tenantId}, ${conversationId}, ${`call_${txid}`}, 'get_order', 'ord_1', 'rejected', 'schema', 'schema.invalid', 1, ${txid}::bigint)`;
    });
    try {
      const range = { from: String(AROUND - 5), horizon: String(AROUND + 5) };
      for (const offset of [0, 4, 5, 9])
        expect(await findTxidAtOffset(db, "decision", range, offset)).toBe(String(TXIDS[offset]));
      expect(await findTxidAtOffset(db, "decision", range, 10)).toBeNull();
    } finally {
      await asTest((tx) => tx.$executeRaw`DELETE FROM "DecisionLog" WHERE "tenantId" = ${world.tenantId}`);
    }
  });
});
