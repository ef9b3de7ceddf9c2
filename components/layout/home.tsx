import Link from "next/link";

/** The front door: what toolgate does, and the way in (sign in, or the workspace of the person's role). */
export function Home({ workspace, denied }: { workspace: string | null; denied: boolean }) {
  return (
    <main id="main">
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
      {workspace ? (
        <p>
          <Link href={workspace}>Continue to your workspace</Link>
        </p>
      ) : (
        <p>
          <Link href="/login">Sign in</Link>
        </p>
      )}
    </main>
  );
}
