import Link from "next/link";
import type { SessionUser } from "@/lib/auth/sign-in/auth";
import { SignOutButton } from "@/components/auth/sign-out-button";

export function TopNav({
  user,
  pendingApprovals = null,
}: {
  user: SessionUser | null;
  pendingApprovals?: number | null;
}) {
  return (
    <nav className="top">
      <strong>
        <Link href="/">toolgate</Link>
      </strong>
      {user?.role === "AGENT" && <Link href="/conversations">Conversations</Link>}
      {user?.role === "AGENT" && <Link href="/connections">Connections</Link>}
      {user?.role === "SUPERVISOR" && (
        <>
          <Link href="/approvals" data-testid="nav-approvals">
            Approvals
            {pendingApprovals ? (
              <span className="badge" aria-label={`${pendingApprovals} pending`}>
                {pendingApprovals}
              </span>
            ) : null}
          </Link>
          <Link href="/approvals/history">History</Link>
        </>
      )}
      {user?.role === "ADMIN" && <Link href="/admin/policy">Policy and keys</Link>}
      {user?.role === "ADMIN" && <Link href="/admin/rules">Rules</Link>}
      {user?.role === "ADMIN" && <Link href="/admin/chat">Slack and Teams</Link>}
      {user?.role === "ADMIN" && <Link href="/admin/upstream">MCP servers</Link>}
      <span className="spacer" />
      {user ? (
        <>
          <span className="muted" data-testid="whoami" title={`${user.email} · tenant ${user.tenantId}`}>
            {user.name} <span className="wide-only">({user.email})</span> · {user.role.toLowerCase()} ·{" "}
            {user.tenantName}
          </span>
          <Link href="/settings">Settings</Link>
          <SignOutButton />
        </>
      ) : (
        <Link href="/login">Sign in</Link>
      )}
    </nav>
  );
}
