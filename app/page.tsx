import Link from "next/link";
import { currentUser } from "@/lib/auth/auth";

export const dynamic = "force-dynamic";

export default async function HomePage({ searchParams }: { searchParams: Promise<{ denied?: string }> }) {
  const user = await currentUser();
  const { denied } = await searchParams;
  const home = user && { AGENT: "/conversations", SUPERVISOR: "/approvals", ADMIN: "/admin/policy" }[user.role];
  return (
    <main>
      <h1>toolgate</h1>
      {denied && (
        <p className="notice" role="alert">
          Your role cannot open that page.
        </p>
      )}
      <p>
        A model only proposes a tool call; toolgate decides, executes what is allowed, holds what is consequential for a
        supervisor, and records every decision.
      </p>
      {user && home ? (
        <p>
          <Link href={home}>Continue to your workspace</Link>
        </p>
      ) : (
        <p>
          <Link href="/login">Sign in</Link>
        </p>
      )}
    </main>
  );
}
