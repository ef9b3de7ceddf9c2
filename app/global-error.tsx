"use client";

import { ProblemPage } from "@/components/layout/problem-page";
import "./globals.css";

// The root layout itself failed (the top bar could not be drawn), so this page brings its own <html> and <body>, and
// its link loads the start page afresh rather than through the client router of a layout that is not there.
export default function GlobalError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <html lang="en">
      <body>
        <ProblemPage
          title="toolgate could not load"
          reference={error.digest}
          actions={
            <>
              <button type="button" onClick={reset}>
                Try again
              </button>
              {/* eslint-disable-next-line @next/next/no-html-link-for-pages -- a full load, see above */}
              <a href="/">Go to the start page</a>
            </>
          }
        >
          <p>
            The server could not draw this page, most likely because it cannot reach its database right now. Nothing was
            half-saved. Wait a moment and try again.
          </p>
        </ProblemPage>
      </body>
    </html>
  );
}
