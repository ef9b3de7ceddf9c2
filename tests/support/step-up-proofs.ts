import { hashPassword } from "@/lib/auth/passwords";
import { proveWithPassword, type StepUpHolder, type StepUpPurpose } from "@/lib/auth/step-up";
import { db } from "@/lib/db";
import { newId } from "@/lib/ids";

// Step-up proofs as a page gets them (decision 014): the person's password typed again, from their own session,
// for one purpose. For tests that call the functions server actions call.

const PASSWORD = "correct horse battery staple";

/** No proof at all: what an action holds when the browser sent none. */
export const noProof = (userId: string): StepUpHolder => ({ userId, sessionId: null, proofId: null });

export async function proved(who: { id: string; tenantId: string }, purpose: StepUpPurpose): Promise<StepUpHolder> {
  const user = await db.user.update({
    where: { id: who.id },
    data: { passwordHash: await hashPassword(PASSWORD) },
    select: { email: true },
  });
  const sessionId = newId("ses");
  await db.session.create({ data: { id: sessionId, userId: who.id, tenantId: who.tenantId } });
  const proof = await proveWithPassword({ id: who.id, email: user.email }, sessionId, purpose, PASSWORD);
  if (proof.kind !== "ok") throw new Error(`no step-up proof: ${proof.kind}`);
  return { userId: who.id, sessionId, proofId: proof.proofId };
}
