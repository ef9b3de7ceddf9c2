import Link from "next/link";
import { LiveRefresh } from "./live-refresh";
import { ProposalConsole } from "./proposal-console";
import { Table } from "@/components/ui/table";
import { TimeAgo } from "@/components/ui/time-ago";
import { count } from "@/lib/words";
import { requestPhrase, toolWords } from "@/lib/approvals/words";
import { outcomeTitleBeside } from "@/lib/calls/words";
import type { conversationCalls } from "@/lib/conversations/console";
import { amountCentsOf, formatMoney } from "@/lib/money";
import type { Outcome } from "@/lib/outcome";
import { callableTools } from "@/lib/tools/registry";

type Found = NonNullable<Awaited<ReturnType<typeof conversationCalls>>>;

/** What a call asked for, from its arguments: the amount and currency, and the order it named (found or not). */
function askedOf(argsCanonical: string | null): {
  amountCents: number | null;
  currency: string | null;
  orderId: string | null;
} {
  const args = argsCanonical ? (JSON.parse(argsCanonical) as Record<string, unknown>) : {};
  return {
    amountCents: amountCentsOf(args),
    currency: typeof args.currency === "string" ? args.currency : null,
    orderId: typeof args.order_id === "string" ? args.order_id : null,
  };
}

/** The conversation's tools in words, each one outside the agent's permissions (a read-only agent's refund) said so. */
function toolsWords(conversation: { tools: string[]; scopes: string[] }): string {
  const callable = new Set(callableTools(conversation));
  return conversation.tools
    .map((tool) => (callable.has(tool) ? toolWords(tool) : `${toolWords(tool)} (not within this agent's permissions)`))
    .join(", ");
}

/** One conversation as its agent sees it: the customer, what it has spent, every call and its outcome, and the console. */
export function ConversationCalls({ conversation, calls, switches }: Found) {
  const currency = calls.map((call) => askedOf(call.argsCanonical).currency).find(Boolean) ?? "USD";
  return (
    <main id="main">
      <h1>
        Conversation with {conversation.customer.email} <LiveRefresh conversationId={conversation.id} />
      </h1>
      <p className="muted">
        {conversation.orderId ? `Bound to ${conversation.orderId} · ` : ""}
        {count(conversation.writesMade, "write")} · {formatMoney(conversation.irreversibleCents, currency)} of
        irreversible impact so far · may use {toolsWords(conversation)} · opened{" "}
        <TimeAgo iso={conversation.createdAt.toISOString()} /> · <code>{conversation.id}</code>
      </p>
      {switches.length > 0 && (
        <ul className="muted" data-testid="conversation-switches">
          {switches.map((change) => (
            <li key={change.at.toISOString() + String(change.arrived)}>
              {change.clientName ?? "A connection"} {change.arrived ? "started" : "stopped"} working on this customer,
              switched by {change.actorName ?? "a person no longer here"} <TimeAgo iso={change.at.toISOString()} />
            </li>
          ))}
        </ul>
      )}
      {calls.length === 0 ? (
        <p className="muted" data-testid="calls-empty">
          No calls yet. Calls your agent runtime proposes, and those you propose below, appear here as they happen.
        </p>
      ) : (
        <Table
          testId="calls"
          rows={calls}
          rowKey={(call) => call.id}
          rowProps={(call) => ({ "data-testid": "call-row", "data-call-id": call.id })}
          columns={[
            {
              label: "Call",
              cell: (call) => (
                <Link href={`/calls/${call.id}`} data-testid="call-timeline">
                  {requestPhrase({
                    toolName: call.toolName,
                    ...askedOf(call.argsCanonical),
                    // The order the call was checked against; one that was not found, as the call named it.
                    ...(call.orderId ? { orderId: call.orderId } : {}),
                    approvedCents: amountCentsOf(call.approval?.approvedArgs),
                  })}
                </Link>
              ),
            },
            {
              label: "Outcome",
              cell: (call) => {
                const outcome = call.outcome as unknown as Outcome;
                const words = outcomeTitleBeside(call.code, call.kind.replace("_", " "));
                return (
                  <>
                    {words && <div>{words}</div>}
                    <span className={`kind-${call.kind}`} data-testid="call-kind">
                      {call.kind.replace("_", " ")}
                    </span>{" "}
                    <code data-testid="call-code">{call.code}</code>
                    {outcome.reason && (
                      <div className="muted" data-testid="call-reason">
                        Why: {outcome.reason}
                      </div>
                    )}
                  </>
                );
              },
            },
            { label: "Proposed", cell: (call) => <TimeAgo iso={call.createdAt.toISOString()} /> },
            { label: "Last change", cell: (call) => <TimeAgo iso={call.updatedAt.toISOString()} /> },
          ]}
        />
      )}
      <ProposalConsole conversationId={conversation.id} />
    </main>
  );
}
