import { YourSettings } from "@/components/settings/your-settings";
import { passkeysOf } from "@/lib/auth/passkeys";
import { requireRole } from "@/lib/auth/guards";
import { MIN_PASSWORD_LENGTH } from "@/lib/auth/password-change";

export const metadata = { title: "Your settings" };

export const dynamic = "force-dynamic";

export default async function SettingsPage() {
  const user = await requireRole(["AGENT", "SUPERVISOR", "ADMIN"]);
  return (
    <YourSettings
      person={{ name: user.name, email: user.email }}
      passkeys={await passkeysOf(user.id)}
      minPasswordLength={MIN_PASSWORD_LENGTH}
    />
  );
}
