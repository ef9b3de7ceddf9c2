"use client";

import Link from "next/link";
import { ProblemPage } from "@/components/layout/problem-page";

// A page failed to load: the server logged the cause under the reference shown here, so a person can quote it to
// whoever runs toolgate. Nothing the page was doing was saved half-way: every write is one transaction.
export default function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <ProblemPage
      title="This page could not be loaded"
      reference={error.digest}
      actions={
        <>
          <button type="button" onClick={reset}>
            Try again
          </button>
          <Link href="/">Go to your workspace</Link>
        </>
      }
    >
      <p>
        Something went wrong on our side while loading it. Nothing you were doing was half-saved: a decision or a change
        either went through completely or not at all.
      </p>
    </ProblemPage>
  );
}
