"use client";

import { useState, useTransition } from "react";
import { TimeAgo } from "@/components/ui/time-ago";
import { useStepUp } from "@/components/step-up/step-up-field";
import { endSessionsAction } from "@/lib/admin/access/actions";
import { removePersonPasskeysAction } from "@/lib/auth/step-up/passkeys/actions";
import { Table } from "@/components/ui/table";
import { FormMessages } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";
import { count } from "@/lib/words";

interface Person {
  id: string;
  email: string;
  name: string;
  role: string;
  active: boolean;
  passkeys: number;
  sessions: { id: string; createdAt: string; lastSeenAt: string; address: string | null; userAgent: string | null }[];
}

/**
 * Each person's live sessions; ending one (or all of a person's) signs that browser out on its next request. An
 * admin can also remove a person's passkeys (a lost device): that asks for the admin's step-up, is audited, and the
 * person is emailed.
 */
export function PeopleSessions({ people, hasPasskey }: { people: Person[]; hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();
  const end = (target: { sessionId: string } | { userId: string }) =>
    startTransition(async () => {
      const response = await endSessionsAction(target);
      setError(response.ok ? null : response.message);
    });
  const removePasskeys = (person: Person) =>
    startTransition(async () => {
      setDone(null);
      const response = await stepUp.run({ kind: "admin.passkeys-removed", userId: person.id }, (proofId) =>
        removePersonPasskeysAction({ userId: person.id, proofId }),
      );
      setError(response.ok ? null : response.message);
      if (response.ok) setDone(`Removed ${person.name}'s passkeys; they were emailed.`);
    });

  return (
    <div>
      <FormMessages error={error} notice={done} />
      {stepUp.field}
      <Table
        rows={people}
        rowKey={(person) => person.id}
        rowProps={(person) => ({ "data-testid": `sessions-${person.email}` })}
        columns={[
          {
            label: "Person",
            cell: (person) => (
              <>
                {person.name}
                <div className="muted">
                  {person.email} · {person.role.toLowerCase()}
                  {person.active ? "" : " · inactive"} · {count(person.passkeys, "passkey")}
                </div>
              </>
            ),
          },
          {
            label: "Live sessions",
            cell: (person) => (
              <>
                {person.sessions.length === 0 && <span className="muted">none</span>}
                {person.sessions.map((session) => (
                  <div key={session.id}>
                    <span title={session.userAgent ?? ""}>
                      signed in <TimeAgo iso={session.createdAt} />, seen <TimeAgo iso={session.lastSeenAt} />, from{" "}
                      {session.address ?? "an unknown address"}
                    </span>{" "}
                    <BusyButton type="button" busy={pending} onClick={() => end({ sessionId: session.id })}>
                      End
                    </BusyButton>
                  </div>
                ))}
              </>
            ),
          },
          {
            label: "End sessions",
            cell: (person) => (
              <>
                <BusyButton
                  type="button"
                  busy={pending}
                  disabled={person.sessions.length === 0}
                  onClick={() => end({ userId: person.id })}
                >
                  End all
                </BusyButton>{" "}
                {person.passkeys > 0 && (
                  <BusyButton
                    type="button"
                    className="danger"
                    busy={pending}
                    onClick={() => removePasskeys(person)}
                    aria-label={`Remove ${person.name}'s passkeys`}
                  >
                    Remove passkeys
                  </BusyButton>
                )}
              </>
            ),
          },
        ]}
      />
    </div>
  );
}
