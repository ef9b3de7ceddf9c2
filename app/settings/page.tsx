import { PasskeyList } from "@/components/settings/passkeys";
import { PasswordForm } from "@/components/settings/password-form";
import { passkeysOf } from "@/lib/auth/passkeys";
import { requireRole } from "@/lib/auth/guards";
import { MIN_PASSWORD_LENGTH } from "@/lib/auth/password-change";

export const dynamic = "force-dynamic";

export default async function SettingsPage() {
  const user = await requireRole(["AGENT", "SUPERVISOR", "ADMIN"]);
  const passkeys = await passkeysOf(user.id);
  return (
    <main>
      <h1>Your settings</h1>
      <p className="muted">
        Signed in as {user.name} ({user.email}).
      </p>
      <PasskeyList
        passkeys={passkeys.map((key) => ({
          id: key.id,
          name: key.name,
          createdAt: key.createdAt.toISOString(),
          lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
        }))}
      />
      <PasswordForm email={user.email} minLength={MIN_PASSWORD_LENGTH} />
    </main>
  );
}
