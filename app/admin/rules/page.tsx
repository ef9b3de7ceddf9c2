import { RulesDesk } from "@/components/admin/rules/rules-desk";
import { rulesOverview } from "@/lib/admin/rules/publishing/publish";
import { requireRole } from "@/lib/auth/guards";
import { passkeysOf } from "@/lib/auth/step-up/passkeys/passkeys";

export const metadata = { title: "Policy rules" };

export const dynamic = "force-dynamic";

export default async function AdminRulesPage() {
  const user = await requireRole(["ADMIN"], "/admin/rules");
  const [overview, passkeys] = await Promise.all([rulesOverview(user.tenantId), passkeysOf(user.id)]);
  return <RulesDesk tenantName={user.tenantName} overview={overview} hasPasskey={passkeys.length > 0} />;
}
