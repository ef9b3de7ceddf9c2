"use client";

import "./globals.css";

// The root layout itself failed (the top bar could not be drawn), so this page brings its own <html> and <body>.
export default function GlobalError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <html lang="en">
      <body>
        <main>
          <h1>toolgate could not load</h1>
          <p>
            The server could not draw this page, most likely because it cannot reach its database right now. Nothing was
            half-saved. Wait a moment and try again.
          </p>
          <p>
            <button type="button" onClick={reset}>
              Try again
            </button>
          </p>
          {error.digest && (
            <p className="muted small">
              If it keeps happening, tell whoever runs toolgate and quote this reference: <code>{error.digest}</code>
            </p>
          )}
        </main>
      </body>
    </html>
  );
}
