"use server";

import { z } from "zod";
import { authedAction, EVERY_ROLE } from "../guards";
import { changeOwnPassword, MAX_PASSWORD_LENGTH } from "./password-change";

/** The lengths are judged by `changeOwnPassword`, which says what is wrong in words. */
export const changePasswordAction = authedAction(
  z.strictObject({
    current: z.string().max(MAX_PASSWORD_LENGTH),
    next: z.string().max(MAX_PASSWORD_LENGTH * 4),
  }),
  EVERY_ROLE,
  async (input, user, session) => {
    const changed = await changeOwnPassword(user, session.id, input.current, input.next);
    switch (changed.kind) {
      case "changed":
        return { ok: true, data: undefined };
      case "wrong":
        return { ok: false, code: "password.wrong", message: "Your current password is not right." };
      case "throttled":
        return {
          ok: false,
          code: "password.throttled",
          message: `Too many wrong passwords. Try again in ${changed.retryAfterSeconds} seconds.`,
        };
      case "weak":
        return { ok: false, code: "password.weak", message: changed.message };
    }
  },
);
