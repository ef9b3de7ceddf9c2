import { PasskeyList } from "./passkeys";
import { PasswordForm } from "./password-form";
import type { passkeysOf } from "@/lib/auth/passkeys";

/** A person's own settings: their passkeys (step-up for large approvals) and their password. */
export function YourSettings({
  person,
  passkeys,
  minPasswordLength,
}: {
  person: { name: string; email: string };
  passkeys: Awaited<ReturnType<typeof passkeysOf>>;
  minPasswordLength: number;
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
    </main>
  );
}
