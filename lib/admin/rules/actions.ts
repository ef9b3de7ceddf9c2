"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "@/lib/auth/guards";
import { parseCases } from "@/lib/policy-rules/cases/cases";
import { heldWords } from "../changes/words";
import {
  checkDraft,
  compareVersions,
  publishRules,
  rollbackRules,
  shadowOneRule,
  withdrawShadowRules,
  type PublishResult,
} from "./publishing/publish";
import { REPLAY_LIMITS } from "@/lib/policy-rules/replay/replay";
import { runJobNow } from "@/lib/job-registry";
import { replayProgress, startReplay } from "./replay";
import { IdSchema } from "@/lib/security/input";
import { setRulesTimeZone } from "./time-zone";
import { ProofIdSchema } from "@/lib/auth/step-up/step-up";

const RulesText = z.string().max(50_000);
/** The test cases as the editor holds them: JSON text (lib/policy-rules/cases/cases.ts). */
const CasesText = z.string().max(200_000);
/** A version number as the database stores it (a 4-byte integer): a larger one would reach the query and fail there. */
const Version = z.number().int().min(1).max(2_147_483_647);

/** Validates a draft against the schema and runs its cases: errors in words, or what each rule does and each case got. */
export const checkRulesAction = authedAction(
  z.strictObject({ text: RulesText, cases: CasesText.default("") }),
  ["ADMIN"],
  async (input) => {
    const cases = parseCases(input.cases);
    if (!cases.ok) return { ok: false, code: "rules.cases-invalid", message: cases.errors.join("\n") };
    const checked = checkDraft(input.text, cases.cases);
    if (!checked.ok) return { ok: false, code: checked.code, message: checked.errors.join("\n") };
    return { ok: true, data: { summaries: checked.summaries, cases: checked.cases } };
  },
);

/** A publish's answer in words; what is refused says what to do, and that nothing changed. */
function publishAnswer(result: PublishResult) {
  if (!result.ok && "errors" in result && result.code === "rules.invalid") {
    return { ok: false as const, code: result.code, message: result.errors.join("\n") };
  }
  if (!result.ok && "errors" in result) {
    return {
      ok: false as const,
      code: result.code,
      message: [
        "The set's own test cases fail, so it was not published; fix the rules or the cases and check again.",
        ...result.errors,
      ].join("\n"),
    };
  }
  if (!result.ok) {
    return {
      ok: false as const,
      code: result.code,
      message: `These rules drop or rewrite rules in force (${result.loosened.join(", ")}), which loosens control. Nothing was changed.`,
    };
  }
  revalidatePath("/admin/rules");
  if ("held" in result) return { ok: true as const, data: { message: heldWords(result.held)! } };
  const { version, status } = result.published;
  return { ok: true as const, data: { message: `Published version ${version} as ${status}.` } };
}

export const publishRulesAction = authedAction(
  z.strictObject({
    text: RulesText,
    cases: CasesText.default(""),
    status: z.enum(["live", "shadow"]),
    proofId: ProofIdSchema.optional(),
  }),
  ["ADMIN"],
  async (input, user, session) => {
    const cases = parseCases(input.cases);
    if (!cases.ok) return { ok: false, code: "rules.cases-invalid", message: cases.errors.join("\n") };
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    return publishAnswer(
      await publishRules(user, { text: input.text, cases: cases.cases, status: input.status }, holder),
    );
  },
);

/** Publishes the live set with one more rule as the shadow set: what that one rule would change, enforced nowhere. */
export const shadowOneRuleAction = authedAction(
  z.strictObject({ text: RulesText, proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    return publishAnswer(await shadowOneRule(user, input.text, holder));
  },
);

/** Publishes an old version's text and cases live again as a new version, classified like any publish. */
export const rollbackRulesAction = authedAction(
  z.strictObject({ version: Version, proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = await rollbackRules(user, input.version, holder);
    if (!result)
      return { ok: false, code: "not-found", message: `There is no version ${input.version}; reload the page.` };
    return publishAnswer(result);
  },
);

/** The line diff between two of the tenant's versions. */
export const compareVersionsAction = authedAction(
  z.strictObject({ from: Version, to: Version }),
  ["ADMIN"],
  async (input, user) => {
    const compared = await compareVersions(user.tenantId, input.from, input.to);
    if (!compared)
      return { ok: false, code: "not-found", message: "One of these versions does not exist; reload the page." };
    return { ok: true, data: compared };
  },
);

/** Queues a replay of the draft and starts this instance's job runner on it; the page polls its progress. */
export const startReplayAction = authedAction(
  z.strictObject({
    text: RulesText,
    days: z.number().int().min(1).max(90),
    limit: z.number().int().min(1).max(REPLAY_LIMITS.max).default(REPLAY_LIMITS.first),
  }),
  ["ADMIN"],
  async (input, user) => {
    const started = await startReplay(user, input);
    if (!started.ok) return started;
    runJobNow("rule-replays");
    return { ok: true, data: { id: started.id } };
  },
);

export const replayProgressAction = authedAction(z.strictObject({ id: IdSchema }), ["ADMIN"], async (input, user) => {
  const progress = await replayProgress(user.tenantId, input.id);
  if (!progress) return { ok: false, code: "not-found", message: "No such replay in your tenant; start it again." };
  return { ok: true, data: progress };
});

export const withdrawShadowAction = authedAction(z.strictObject({}), ["ADMIN"], async (_input, user) => {
  const withdrawn = await withdrawShadowRules(user);
  revalidatePath("/admin/rules");
  return { ok: true, data: { withdrawn } };
});

/**
 * Sets the time zone the rules' time of day is read in; while the live rules read the time, needs the admin's
 * step-up for that zone and is held for a second admin.
 */
export const setTimeZoneAction = authedAction(
  z.strictObject({ timeZone: z.string().trim().min(1).max(64), proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = await setRulesTimeZone(user, input.timeZone, holder);
    if (!result.ok) return result;
    revalidatePath("/admin/rules");
    if ("held" in result) return { ok: true, data: { message: heldWords(result.held)! } };
    return { ok: true, data: { message: `The rules now read the time in ${result.set}.` } };
  },
);
