import type { ReactNode } from "react";

/**
 * The one layout of a page that could not show what was asked for: what happened in a heading, why and what it means
 * in words, then what to do as buttons or links, and the server's reference to quote when there is one.
 */
export function ProblemPage({
  title,
  children,
  actions,
  reference,
}: {
  title: string;
  children: ReactNode;
  actions: ReactNode;
  reference?: string;
}) {
  return (
    <main id="main">
      <h1>{title}</h1>
      {children}
      <p className="actions">{actions}</p>
      {reference && (
        <p className="muted small">
          If it keeps happening, tell whoever runs toolgate and quote this reference: <code>{reference}</code>
        </p>
      )}
    </main>
  );
}
