import { LinkRequest } from "@/components/approvals/link-request";
import { deskPolicy } from "@/lib/approvals/desk/cards";
import { openApprovalLink } from "@/lib/approvals/email-links/open";
import { requireSession } from "@/lib/auth/guards";
import { stepUpWayOf } from "@/lib/auth/step-up/step-up";

export const dynamic = "force-dynamic";
// The token is in this page's address: never send it on to another site.
export const metadata = { title: "Approval request", referrer: "no-referrer" };

export default async function ApprovalLinkPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const { user, sessionId } = await requireSession(["SUPERVISOR"], `/approvals/r/${token}`);
  const [view, way, policy] = await Promise.all([
    openApprovalLink(user, token),
    stepUpWayOf(user.id, sessionId),
    deskPolicy(user.tenantId),
  ]);
  return (
    <LinkRequest token={token} view={view} way={way} stepUpAboveCents={policy.stepUpAboveCents} viewerId={user.id} />
  );
}
