import { headers } from "next/headers";
import { WorkingConnections } from "@/components/conversations/working-connections";
import { issuerFor, mcpResourceOf } from "@/lib/auth/keys/access-tokens";
import { requireRole } from "@/lib/auth/guards";
import { searchCustomers } from "@/lib/conversations/console";
import { workingConnections } from "@/lib/conversations/working-on";

export const metadata = { title: "Your connections" };

export const dynamic = "force-dynamic";

export default async function ConnectionsPage() {
  const user = await requireRole(["AGENT"], "/connections");
  const person = { userId: user.id, tenantId: user.tenantId };
  const [connections, firstCustomers] = await Promise.all([
    workingConnections(person),
    searchCustomers(user.tenantId, ""),
  ]);
  const url = mcpResourceOf(issuerFor((await headers()).get("host")));
  return <WorkingConnections connections={connections} firstCustomers={firstCustomers} url={url} />;
}
