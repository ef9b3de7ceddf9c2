import Link from "next/link";
import { formatDuration } from "@/components/ui/time-words";
import { TimeAgo } from "@/components/ui/time-ago";
import { EarlierCallLink } from "@/components/approvals/held-reasons";
import { argumentWords, capitalized } from "@/components/ui/words";
import { requestPhrase } from "@/lib/approvals/words";
import { amountCentsOf } from "@/lib/money";
import type { callTimeline } from "@/lib/calls/timeline";

type Found = NonNullable<Awaited<ReturnType<typeof callTimeline>>>;

/** One call from proposal to its last event; the conversation links through only for the agent who owns it. */
export function CallTimeline({ call, approval, events, ownConversation }: Found & { ownConversation: boolean }) {
  const args = call.argsCanonical ? (JSON.parse(call.argsCanonical) as Record<string, unknown>) : {};
  const approvedCents = amountCentsOf(approval?.approvedArgs);
  const summary = requestPhrase({
    toolName: call.toolName,
    orderId: call.orderId,
    amountCents: amountCentsOf(args),
    currency: typeof args.currency === "string" ? args.currency : null,
    approvedCents,
  });
  return (
    <main id="main">
      <h1>Timeline: {summary}</h1>
      <section className="card">
        <dl className="facts">
          <dt>Now</dt>
          <dd>
            <span className={`kind-${call.kind}`} data-testid="timeline-kind">
              {call.kind.replace("_", " ")}
            </span>{" "}
            <code data-testid="timeline-code">{call.code}</code>
          </dd>
          <dt>Customer</dt>
          <dd>{call.customerEmail ?? "—"}</dd>
          <dt>Agent</dt>
          <dd>{call.agentName ?? "—"}</dd>
          <dt>Conversation</dt>
          <dd>
            {ownConversation ? (
              <Link href={`/conversations/${call.conversationId}`}>
                Conversation with {call.customerEmail ?? "its customer"}
              </Link>
            ) : (
              `${call.agentName ?? "The agent"}'s conversation with ${call.customerEmail ?? "its customer"}`
            )}{" "}
            <code className="muted">{call.conversationId}</code>
          </dd>
          {argumentWords(args, approvedCents).map(({ key, label, value }) => (
            <div key={key} style={{ display: "contents" }}>
              <dt>{capitalized(label)}</dt>
              <dd>{value}</dd>
            </div>
          ))}
          {approval?.decidedAt && (
            <>
              <dt>Decision latency</dt>
              <dd data-testid="timeline-latency">
                {formatDuration(approval.decidedAt.getTime() - approval.createdAt.getTime())}
              </dd>
            </>
          )}
          <dt>Call id</dt>
          <dd>
            <code>{call.id}</code>
          </dd>
        </dl>
      </section>
      <h2>What happened</h2>
      <ol className="timeline" data-testid="timeline">
        {events.map((event, index) => (
          <li key={index} data-testid="timeline-event">
            <TimeAgo iso={event.at.toISOString()} /> · <strong>{event.title}</strong>
            {event.by && <span> by {event.by}</span>}
            {event.code && (
              <>
                {" "}
                <code className="muted">{event.code}</code>
              </>
            )}
            {(event.detail || event.earlierCallId) && (
              <div className="muted detail">
                {event.detail}
                {event.earlierCallId && <EarlierCallLink callId={event.earlierCallId} />}
              </div>
            )}
          </li>
        ))}
      </ol>
    </main>
  );
}
