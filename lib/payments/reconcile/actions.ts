"use server";

import { revalidatePath } from "next/cache";
import { authedAction } from "../../auth/guards";
import { resolveInvestigation, ResolveInvestigationSchema } from "./investigations";

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
