"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { approveChange, cancelChange } from "@/lib/admin/changes/two-admin";
import { authedAction } from "@/lib/auth/guards";
import { IdSchema } from "@/lib/security/input";
import { ProofIdSchema } from "@/lib/auth/step-up/step-up";

// The two-admin rule's decisions (docs/decisions/015): a different admin approves the exact change shown to them;
// any supervisor or admin cancels.

export const approveAdminChangeAction = authedAction(
  z.strictObject({
    changeId: IdSchema,
    digest: z.string().regex(/^[0-9a-f]{64}$/),
    proofId: ProofIdSchema.optional(),
  }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = await approveChange(user, input.changeId, input.digest, holder);
    revalidatePath("/admin/policy");
    return result.ok ? { ok: true, data: undefined } : result;
  },
);

export const cancelAdminChangeAction = authedAction(
  z.strictObject({ changeId: IdSchema }),
  ["ADMIN", "SUPERVISOR"],
  async (input, user) => {
    if (!(await cancelChange(user, input.changeId)))
      return { ok: false, code: "not-found", message: "No such waiting change in your tenant; it may be decided." };
    revalidatePath("/admin/policy");
    revalidatePath("/approvals");
    return { ok: true, data: undefined };
  },
);
