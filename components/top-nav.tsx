import Link from "next/link";
import type { SessionUser } from "@/lib/auth/auth";
import { SignOutButton } from "./sign-out-button";

export function TopNav({ user }: { user: SessionUser | null }) {
  return (
    <nav className="top">
      <strong>
        <Link href="/">toolgate</Link>
      </strong>
      {user?.role === "AGENT" && <Link href="/conversations">Conversations</Link>}
      {user?.role === "SUPERVISOR" && (
        <>
          <Link href="/approvals">Approvals</Link>
          <Link href="/approvals/history">History</Link>
        </>
      )}
      {user?.role === "ADMIN" && <Link href="/admin/policy">Policy and keys</Link>}
      <span className="spacer" />
      {user ? (
        <>
          <span className="muted" data-testid="whoami">
            {user.email} · {user.role.toLowerCase()} · {user.tenantId}
          </span>
          <SignOutButton />
        </>
      ) : (
        <Link href="/login">Sign in</Link>
      )}
    </nav>
  );
}
