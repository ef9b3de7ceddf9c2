import { OwnConnections, type OwnConnection } from "./own-connections";
import { PasskeyList } from "./passkeys";
import { PasswordForm } from "./password-form";
import type { passkeysOf } from "@/lib/auth/step-up/passkeys/passkeys";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";

/** A person's own settings: their passkeys (step-up for large approvals), their password, the clients acting as them. */
export function YourSettings({
  person,
  passkeys,
  stepUp,
  minPasswordLength,
  connections,
}: {
  person: { name: string; email: string };
  passkeys: Awaited<ReturnType<typeof passkeysOf>>;
  stepUp: StepUpWay;
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
        stepUp={stepUp}
      />
      <PasswordForm email={person.email} minLength={minPasswordLength} />
      <OwnConnections connections={connections} />
    </main>
  );
}
