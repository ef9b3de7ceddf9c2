import { DecisionHistory } from "@/components/approvals/decision-history";
import { HistoryFilterSchema } from "@/lib/approvals/desk/filters";
import { decisionHistory, historyPeople } from "@/lib/approvals/desk/history";
import { requireRole } from "@/lib/auth/guards";

export const metadata = { title: "Decision history" };

export const dynamic = "force-dynamic";

type Params = Record<string, string | string[] | undefined>;

export default async function ApprovalHistoryPage({ searchParams }: { searchParams: Promise<Params> }) {
  const user = await requireRole(["SUPERVISOR"], "/approvals/history");
  const raw = await searchParams;
  const filter = HistoryFilterSchema.parse(
    Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, Array.isArray(value) ? value[0] : value])),
  );
  const [page, people] = await Promise.all([decisionHistory(user.tenantId, filter), historyPeople(user.tenantId)]);
  return <DecisionHistory tenantId={user.tenantId} filter={filter} page={page} people={people} />;
}
