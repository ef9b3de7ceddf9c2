import Link from "next/link";
import { TimeAgo, TimeLeft } from "@/components/ui/time-ago";
import type { CardItem } from "./card-item";

/** Whom a held call is for, who asked and when, its timeline and the time left: the same line on every card. */
export function CardWho({ item, customerId, now }: { item: CardItem; customerId: string; now: number | null }) {
  const { facts } = item;
  return (
    <p className="who" data-testid="card-who">
      For <strong>{facts.customer?.email ?? customerId}</strong> · asked by{" "}
      {facts.requester ? `${facts.requester.name} (${facts.requester.email})` : item.requestedBy}{" "}
      <TimeAgo iso={item.createdAt} /> (<Link href={`/calls/${item.originCallId}`}>the call&apos;s timeline</Link>) ·{" "}
      <TimeLeft expiresAt={item.expiresAt} now={now} />
    </p>
  );
}

/** A card's two decisions and the ids a supervisor may need to quote: the request's and the call's. */
export function CardActions({
  item,
  approveDisabled,
  denyDisabled,
  onApprove,
  onDeny,
}: {
  item: CardItem;
  approveDisabled: boolean;
  denyDisabled: boolean;
  onApprove: () => void;
  onDeny: () => void;
}) {
  return (
    <p className="actions">
      <button type="button" className="primary" disabled={approveDisabled} onClick={onApprove}>
        Approve
      </button>{" "}
      <button type="button" className="danger" disabled={denyDisabled} onClick={onDeny}>
        Deny
      </button>
      <span className="muted small">
        {" "}
        request <code>{item.id}</code> · call <code>{item.originCallId}</code>
      </span>
    </p>
  );
}
