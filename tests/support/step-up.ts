import bcrypt from "bcryptjs";
import { policyItem, proveWithPassword, type StepUpHolder, type StepUpPurpose } from "@/lib/auth/step-up/step-up";
import { db } from "@/lib/db";
import { newId } from "@/lib/ids";

export const STEP_UP_PASSWORD = "step-up-password";

/** A live session row for a person, as a sign-in makes it. */
export async function sessionOf(userId: string): Promise<string> {
  const { tenantId } = await db.user.findUniqueOrThrow({ where: { id: userId }, select: { tenantId: true } });
  const id = newId("ses");
  await db.session.create({ data: { id, userId, tenantId }, select: { id: true } });
  return id;
}

/**
 * A real password step-up for one purpose, made through the same function the ceremony's action calls, in a new
 * session of the person (or the one given); returns what an action presents to consume it.
 */
export async function provedFor(
  userId: string,
  purpose: StepUpPurpose,
  sessionId?: string,
): Promise<StepUpHolder & { proofId: string; sessionId: string }> {
  const person = await db.user.update({
    where: { id: userId },
    data: { passwordHash: bcrypt.hashSync(STEP_UP_PASSWORD, 4) },
    select: { id: true, email: true },
  });
  const session = sessionId ?? (await sessionOf(userId));
  const proved = await proveWithPassword(person, session, purpose, STEP_UP_PASSWORD);
  if (proved.kind !== "ok") throw new Error(`step-up refused: ${proved.kind}`);
  return { userId, sessionId: session, proofId: proved.proofId };
}

/** A proof for saving the policy form with exactly these typed values. */
export async function policyProof(userId: string, values: Record<string, string>) {
  return { holder: await provedFor(userId, { kind: "admin.policy", values }), item: policyItem(values) };
}

/** No proof at all, from a live session: what a stolen cookie presents. */
export async function noProof(userId: string): Promise<StepUpHolder> {
  return { userId, sessionId: await sessionOf(userId), proofId: null };
}
