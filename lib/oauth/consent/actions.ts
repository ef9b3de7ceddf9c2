"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction, EVERY_ROLE } from "@/lib/auth/guards";
import { IdSchema } from "@/lib/security/input";
import { revokeConnection, revokeOwnConnection } from "./connections";

export const revokeConnectionAction = authedAction(
  z.strictObject({ grantId: IdSchema }),
  ["ADMIN"],
  async (input, user) => {
    if (!(await revokeConnection(user, input.grantId)))
      return {
        ok: false,
        code: "not-found",
        message: "No such live connection in your tenant; it may be revoked already.",
      };
    revalidatePath("/admin/policy");
    return { ok: true, data: undefined };
  },
);

export const revokeOwnConnectionAction = authedAction(
  z.strictObject({ grantId: IdSchema }),
  EVERY_ROLE,
  async (input, user) => {
    if (!(await revokeOwnConnection(user, input.grantId)))
      return {
        ok: false,
        code: "not-found",
        message: "No such live connection of yours; it may be revoked already.",
      };
    revalidatePath("/settings");
    return { ok: true, data: undefined };
  },
);
