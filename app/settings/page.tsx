import { YourSettings } from "@/components/settings/your-settings";
import { passkeysOf } from "@/lib/auth/step-up/passkeys/passkeys";
import { stepUpWayOf } from "@/lib/auth/step-up/step-up";
import { EVERY_ROLE, requireSession } from "@/lib/auth/guards";
import { MIN_PASSWORD_LENGTH } from "@/lib/auth/sign-in/password-change";
import { ownConnections } from "@/lib/oauth/consent/connections";

export const metadata = { title: "Your settings" };

export const dynamic = "force-dynamic";

export default async function SettingsPage() {
  const { user, sessionId } = await requireSession(EVERY_ROLE);
  const [passkeys, stepUp, connections] = await Promise.all([
    passkeysOf(user.id),
    stepUpWayOf(user.id, sessionId),
    ownConnections(user),
  ]);
  return (
    <YourSettings
      person={{ name: user.name, email: user.email }}
      passkeys={passkeys}
      stepUp={stepUp}
      minPasswordLength={MIN_PASSWORD_LENGTH}
      connections={connections.map((row) => ({
        id: row.id,
        clientId: row.clientId,
        clientName: row.clientName,
        clientKind: row.clientKind,
        scopes: row.scopes,
        createdAt: row.createdAt.toISOString(),
        lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
        revokedAt: row.revokedAt?.toISOString() ?? null,
      }))}
    />
  );
}
