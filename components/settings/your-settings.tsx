import { OwnConnections, type OwnConnection } from "./own-connections";
import { PasskeyList } from "./passkeys";
import { PasswordForm } from "./password-form";
import type { passkeysOf } from "@/lib/auth/step-up/passkeys/passkeys";

/** A person's own settings: their passkeys (step-up for large approvals), their password, the clients acting as them. */
export function YourSettings({
  person,
  passkeys,
  minPasswordLength,
  connections,
}: {
  person: { name: string; email: string };
  passkeys: Awaited<ReturnType<typeof passkeysOf>>;
  minPasswordLength: number;
  connections: OwnConnection[];
}) {
  return (
    <main id="main">
      <h1>Your settings</h1>
      <p className="muted">
        Signed in as {person.name} ({person.email}).
      </p>
      <PasskeyList
        passkeys={passkeys.map((key) => ({
          id: key.id,
          name: key.name,
          createdAt: key.createdAt.toISOString(),
          lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
        }))}
      />
      <PasswordForm email={person.email} minLength={minPasswordLength} />
      <OwnConnections connections={connections} />
    </main>
  );
}
