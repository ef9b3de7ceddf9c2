"use client";

import { useState, useTransition } from "react";
import { TimeAgo } from "@/components/ui/time-ago";
import { endSessionsAction } from "@/lib/admin/actions";

interface Person {
  id: string;
  email: string;
  name: string;
  role: string;
  active: boolean;
  sessions: { id: string; createdAt: string; lastSeenAt: string; address: string | null; userAgent: string | null }[];
}

/** Each person's live sessions; ending one (or all of a person's) signs that browser out on its next request. */
export function PeopleSessions({ people }: { people: Person[] }) {
  const [error, setError] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();
  const end = (target: { sessionId: string } | { userId: string }) =>
    startTransition(async () => {
      const response = await endSessionsAction(target);
      setError(response.ok ? null : response.message);
    });

  return (
    <div>
      {error && <p className="error">{error}</p>}
      <table>
        <thead>
          <tr>
            <th>Person</th>
            <th>Live sessions</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {people.map((person) => (
            <tr key={person.id} data-testid={`sessions-${person.email}`}>
              <td>
                {person.name}
                <div className="muted">
                  {person.email} · {person.role.toLowerCase()}
                  {person.active ? "" : " · inactive"}
                </div>
              </td>
              <td>
                {person.sessions.length === 0 && <span className="muted">none</span>}
                {person.sessions.map((session) => (
                  <div key={session.id}>
                    <span title={session.userAgent ?? ""}>
                      signed in <TimeAgo iso={session.createdAt} />, seen <TimeAgo iso={session.lastSeenAt} />, from{" "}
                      {session.address ?? "an unknown address"}
                    </span>{" "}
                    <button type="button" disabled={pending} onClick={() => end({ sessionId: session.id })}>
                      End
                    </button>
                  </div>
                ))}
              </td>
              <td>
                <button
                  type="button"
                  disabled={pending || person.sessions.length === 0}
                  onClick={() => end({ userId: person.id })}
                >
                  End all
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
