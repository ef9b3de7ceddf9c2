import { LinkRequest } from "@/components/approvals/link-request";
import { openApprovalLink } from "@/lib/approvals/email-links/open";
import { requireRole } from "@/lib/auth/guards";

export const dynamic = "force-dynamic";
// The token is in this page's address: never send it on to another site.
export const metadata = { title: "Approval request", referrer: "no-referrer" };

export default async function ApprovalLinkPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const user = await requireRole(["SUPERVISOR"], `/approvals/r/${token}`);
  return <LinkRequest token={token} view={await openApprovalLink(user, token)} />;
}
