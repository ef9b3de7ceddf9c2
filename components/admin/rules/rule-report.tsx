import { Table } from "@/components/ui/table";
import { TimeAgo } from "@/components/ui/time-ago";
import { formatMoney } from "@/lib/money";
import { moneyOf, reportSummary, type DifferenceReport } from "@/lib/policy-rules/replay/replay";
import { count } from "@/lib/words";

const WORDS = { allow: "allowed", hold: "held for a supervisor", deny: "refused", fail: "stopped (rules failed)" };

/**
 * The calls a rule set would decide differently, grouped by rule with counts and money, then one by one. `over`
 * names the calls compared ("recorded in the last 7 days").
 */
export function RuleReport({ report, over, testId }: { report: DifferenceReport; over: string; testId: string }) {
  return (
    <div data-testid={testId}>
      <p data-testid={`${testId}-summary`}>{reportSummary(report, over)}</p>
      {report.more && (
        <p className="muted" data-testid={`${testId}-more`}>
          Only the newest {report.decisions} recorded decisions were read; older ones remain.
        </p>
      )}
      {Boolean(report.olderFacts) && (
        <p className="muted" data-testid={`${testId}-older-facts`}>
          {count(report.olderFacts!, "call")} were recorded before the agent&apos;s role, age and exposure, the
          customer&apos;s recent refunds, the tool&apos;s arguments and the time of day were kept: a rule reads those as
          0, an empty text or false, at hour 0 of a Monday.
        </p>
      )}
      {report.byRule.length > 0 && (
        <Table
          columns={[
            { label: "Rule", cell: (group) => group.rule },
            { label: "Calls", cell: (group) => count(group.calls, "call") },
            { label: "Money", cell: (group) => moneyOf(group.cents) },
          ]}
          rows={report.byRule}
          rowKey={(group) => group.rule}
          rowProps={() => ({ "data-testid": `${testId}-rule` })}
        />
      )}
      {report.differences.length > 0 && (
        <Table
          columns={[
            { label: "When", cell: (difference) => <TimeAgo iso={difference.at} /> },
            {
              label: "Call",
              cell: (difference) => (
                <>
                  {difference.tool} <code className="muted">{difference.callId}</code>
                </>
              ),
            },
            { label: "Amount", cell: (difference) => formatMoney(difference.amountCents, difference.currency) },
            { label: "Was", cell: (difference) => WORDS[difference.was] },
            { label: "Would be", cell: (difference) => WORDS[difference.would] },
            { label: "Because of", cell: (difference) => difference.rules.join(", ") || "the numbers" },
          ]}
          rows={report.differences}
          rowKey={(difference) => difference.callId}
          rowProps={(difference) => ({ "data-testid": `${testId}-call`, "data-call-id": difference.callId })}
        />
      )}
    </div>
  );
}
