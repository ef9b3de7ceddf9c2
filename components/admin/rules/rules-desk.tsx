import { RuleReport } from "@/components/admin/rules/rule-report";
import { RuleHistory } from "@/components/admin/rules/rule-history";
import { RulesEditor } from "@/components/admin/rules/rules-editor";
import { TimeZoneForm } from "@/components/admin/rules/time-zone-form";
import { TimeAgo } from "@/components/ui/time-ago";
import type { rulesOverview } from "@/lib/admin/rules/publishing/publish";
import { FACT_WORDS, RULE_ACTIONS } from "@/lib/policy-rules/schema";

type Overview = Awaited<ReturnType<typeof rulesOverview>>;
type InForce = Overview["live"];

/** What a set that no longer passes the checks does to calls, by where it is in force. */
const BROKEN_SET_DOES = {
  "live-rules":
    "calls it judges are refused as unavailable (policy.rules-failed) until a set that passes is published live",
  "shadow-rules": "its verdicts are recorded as failed until a set that passes is published as shadow",
} as const;

function RuleSet({ set, testId }: { set: NonNullable<InForce>; testId: keyof typeof BROKEN_SET_DOES }) {
  return (
    <div className="card" data-testid={testId}>
      <p className="muted">
        Version {set.version}, published by {set.author} <TimeAgo iso={set.createdAt} />
      </p>
      {set.problems.length > 0 && (
        <div className="error" role="alert" data-testid={`${testId}-problems`}>
          <p>
            This set no longer passes this version of toolgate&apos;s checks, so {BROKEN_SET_DOES[testId]}. Correct it
            in the editor below and publish it again:
          </p>
          <ul>
            {set.problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        </div>
      )}
      <ul>
        {set.summaries.map((summary) => (
          <li key={summary.id} data-testid={`${testId}-rule`}>
            <strong>{summary.id}</strong>: {summary.text}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The rules page: the sets in force, what the shadow set would change, the editor, what rules read, the history. */
export function RulesDesk({
  tenantName,
  overview,
  hasPasskey,
}: {
  tenantName: string;
  overview: Overview;
  hasPasskey: boolean;
}) {
  return (
    <main id="main">
      <h1>Policy rules for {tenantName}</h1>
      <p className="muted">
        Rules run after the policy numbers on every call. They can hold a call for a supervisor or refuse it; the
        numbers, exact-argument approval and the re-check at approval stay in force whatever the rules say.
      </p>
      <h2>Live rules</h2>
      {overview.live ? (
        <RuleSet set={overview.live} testId="live-rules" />
      ) : (
        <p className="muted">No live rules: calls are decided by the policy numbers alone.</p>
      )}
      <h2>Shadow rules</h2>
      {overview.shadow ? (
        <>
          <RuleSet set={overview.shadow} testId="shadow-rules" />
          <h3>Calls the shadow rules would decide differently (last 7 days)</h3>
          {overview.shadowReport && (
            <RuleReport
              report={overview.shadowReport}
              over="decided under these shadow rules in the last 7 days"
              testId="shadow"
            />
          )}
        </>
      ) : (
        <p className="muted">
          No shadow rules. Publish a set as shadow to see, on every call, what it would have done, without enforcing it.
        </p>
      )}
      <h2>Edit</h2>
      <RulesEditor initial={overview.shadow ?? overview.live} hasPasskey={hasPasskey} />
      <h3>What a rule can read</h3>
      <TimeZoneForm current={overview.timeZone} hasPasskey={hasPasskey} />
      <dl data-testid="rule-facts">
        <dt>
          <code>action == Action::&quot;…&quot;</code>
        </dt>
        <dd>the tool: {RULE_ACTIONS.join(", ")}</dd>
        {FACT_WORDS.map(([name, words]) => (
          <div key={name}>
            <dt>
              <code>{name}</code>
            </dt>
            <dd>{words}</dd>
          </div>
        ))}
      </dl>
      <h2>History</h2>
      {overview.history.length === 0 ? (
        <p className="muted">No versions yet. Every publish appears here with who made it.</p>
      ) : (
        <RuleHistory history={overview.history} hasPasskey={hasPasskey} />
      )}
    </main>
  );
}
