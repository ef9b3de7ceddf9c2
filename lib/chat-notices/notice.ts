import { z } from "zod";

// What a chat notice says about a held call, as its outbox row carries it: the facts are the host's (the request's
// preview, the agent's and the decider's names), never anything the model wrote. Slack's message and Teams' card
// are both drawn from it when it is sent (slack-message.ts, teams-card.ts).

const Moment = z.iso.datetime();

export const NoticeStateSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("waiting"), at: Moment }),
  /** The first of two approvals: the call waits for a second supervisor. */
  z.strictObject({ kind: z.literal("escalated"), by: z.string(), at: Moment }),
  z.strictObject({ kind: z.enum(["approved", "denied", "failed"]), by: z.string(), at: Moment }),
  z.strictObject({ kind: z.enum(["expired", "withdrawn"]), at: Moment }),
]);
export type NoticeState = z.infer<typeof NoticeStateSchema>;

export const ChatNoticeSchema = z.strictObject({
  approvalId: z.string(),
  /** "80.00 USD refund on ord_1004" */
  what: z.string(),
  agent: z.string(),
  /** The customer's email before their id: "ana@example.com (cus_1)". */
  customer: z.string(),
  /** "80.00 USD" */
  amount: z.string(),
  reasons: z.array(z.string()),
  expiresAt: Moment,
  /** The card on the approval desk, behind sign-in: the decision is made there, never in chat. */
  deskUrl: z.url(),
  state: NoticeStateSchema,
});
export type ChatNotice = z.infer<typeof ChatNoticeSchema>;

/** The first line of a notice: what is asked, or what became of it and who decided. */
export function headline(notice: ChatNotice): string {
  const { state, what } = notice;
  switch (state.kind) {
    case "waiting":
      return `Approval needed: ${what}`;
    case "escalated":
      return `Approved once by ${state.by}, waits for a second supervisor: ${what}`;
    case "approved":
      return `Approved by ${state.by}: ${what}`;
    case "denied":
      return `Denied by ${state.by}: ${what}`;
    case "failed":
      return `Approved by ${state.by}, but nothing was executed (the re-check failed): ${what}`;
    case "expired":
      return `Expired, nobody decided: ${what}`;
    case "withdrawn":
      return `Withdrawn by the agent before anyone decided: ${what}`;
  }
}

/** Whether the call still waits for a decision on the desk. */
export const stillOpen = (notice: ChatNotice) => notice.state.kind === "waiting" || notice.state.kind === "escalated";
