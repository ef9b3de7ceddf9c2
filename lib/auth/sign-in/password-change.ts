import { db } from "../../db";
import { hashPassword, verifyPassword } from "../password-hash";
import { changePasswordAudited, findPasswordHash } from "./sql";
import { attemptSucceeded, beginAuditedAttempt, inSessionKeys } from "../throttle";

/** Long enough that a guessed password needs more tries than the throttle ever allows. */
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 200;

export type PasswordChange =
  | { kind: "changed" }
  | { kind: "wrong" }
  | { kind: "throttled"; retryAfterSeconds: number }
  | { kind: "weak"; message: string };

/**
 * A person changes their own password: the current one first, under the in-session throttle step-up also counts on
 * (a stolen cookie guesses no faster than at the sign-in form, and failed sign-ins from outside cannot block it),
 * then the new one hashed with argon2id. Changing it ends every session of the person, this one included (a
 * database trigger on `passwordChangedAt`).
 */
export async function changeOwnPassword(
  person: { id: string; tenantId: string },
  sessionId: string,
  current: string,
  next: string,
): Promise<PasswordChange> {
  const length = Array.from(next).length;
  if (length < MIN_PASSWORD_LENGTH)
    return { kind: "weak", message: `The new password needs at least ${MIN_PASSWORD_LENGTH} characters.` };
  if (length > MAX_PASSWORD_LENGTH)
    return { kind: "weak", message: `The new password may have at most ${MAX_PASSWORD_LENGTH} characters.` };
  if (next === current) return { kind: "weak", message: "The new password must differ from the current one." };
  const passwordHash = await findPasswordHash(db, person.id);
  const keys = inSessionKeys({ userId: person.id, sessionId });
  const attempt = await beginAuditedAttempt(keys, {
    action: "password.throttled",
    detail: { session_id: sessionId },
    who: () => ({ tenantId: person.tenantId, actorId: person.id }),
  });
  if (!attempt.allowed) return { kind: "throttled", retryAfterSeconds: attempt.retryAfterSeconds };
  if (!(await verifyPassword(current, passwordHash)).matches) return { kind: "wrong" };
  await attemptSucceeded(keys);
  await changePasswordAudited(db, { userId: person.id, passwordHash: await hashPassword(next), sessionId });
  return { kind: "changed" };
}
