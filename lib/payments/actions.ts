"use server";

import { revalidatePath } from "next/cache";
import { authedAction } from "../auth/guards";
import { resolveInvestigation, ResolveInvestigationSchema } from "./investigations";

/** A supervisor closes one refund under investigation as issued or released. */
export const resolveInvestigationAction = authedAction(
  ResolveInvestigationSchema,
  ["SUPERVISOR"],
  async (input, user) => {
    const result = await resolveInvestigation({ userId: user.id, tenantId: user.tenantId, role: user.role }, input);
    if (result.ok) revalidatePath("/approvals");
    return result;
  },
);
