"use server";

import { revalidatePath } from "next/cache";
import { authedAction } from "../../auth/guards";
import { resolveInvestigation, ResolveInvestigationSchema } from "./investigations";
import { closeOverpaid, CloseOverpaidSchema } from "./overpaid";

/** A supervisor closes one refund under investigation as issued or released. */
export const resolveInvestigationAction = authedAction(
  ResolveInvestigationSchema,
  ["SUPERVISOR"],
  async (input, user, session) => {
    const supervisor = { userId: user.id, tenantId: user.tenantId, role: user.role, sessionId: session.id };
    const result = await resolveInvestigation(supervisor, input);
    if (result.ok) revalidatePath("/approvals");
    return result;
  },
);

/** A supervisor records what was done about a refund the provider paid past its order's total. */
export const closeOverpaidAction = authedAction(CloseOverpaidSchema, ["SUPERVISOR"], async (input, user, session) => {
  const supervisor = { userId: user.id, tenantId: user.tenantId, role: user.role, sessionId: session.id };
  const result = await closeOverpaid(supervisor, input);
  if (result.ok) revalidatePath("/approvals");
  return result;
});
