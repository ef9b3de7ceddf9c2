import type { CardFacts, DeskPolicy } from "@/lib/approvals/desk/cards";
import type { QueueItem } from "@/lib/approvals/desk/queue";
import { isUpstreamPreview } from "@/lib/upstream/calls/preview";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";

// A request as the desk's cards and dialogs hold it, and what they read from it.

export type CardItem = Omit<QueueItem, "createdAt" | "expiresAt"> & {
  createdAt: string;
  expiresAt: string;
  facts: CardFacts;
};

/** The amount an approval now approves: what the first of two approvers approved, else the proposal's. */
export function amountOf(item: CardItem): number {
  if (isUpstreamPreview(item.preview)) return 0;
  return item.facts.firstApprover?.cents ?? item.preview.impact.amount_cents;
}

/** What the order has left to refund: as the desk read it now, else as it was when the request was checked. */
export function refundableNowOf(item: CardItem): number | null {
  if (isUpstreamPreview(item.preview)) return null;
  const now = item.facts.orderNow;
  return now ? now.totalCents - now.refundedCents : item.preview.order.refundable_cents;
}

/** The request's currency; an upstream call moves no money. */
export const currencyOf = (item: CardItem): string =>
  isUpstreamPreview(item.preview) ? "USD" : item.preview.impact.currency;

/** Whether approving this request moves money (and so is confirmed in a dialog). */
export function movesMoney(item: CardItem): boolean {
  return item.toolName === "issue_refund" && amountOf(item) > 0;
}

export interface CardProps {
  item: CardItem;
  policy: DeskPolicy;
  /** How the viewer proves a step-up (`stepUpWayOf`): the card says what approving it will ask. */
  way: StepUpWay;
  me: string;
  now: number | null;
  focused: boolean;
  selected: boolean;
  busy: boolean;
  onFocus(): void;
  onToggle(): void;
  onApprove(): void;
  onDeny(): void;
}
