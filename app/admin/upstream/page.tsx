import { UpstreamAdmin } from "@/components/upstream/upstream-admin";
import { requireRole } from "@/lib/auth/guards";
import { upstreamOverview } from "@/lib/upstream/servers/overview";

export const metadata = { title: "MCP servers" };

export const dynamic = "force-dynamic";

export default async function AdminUpstreamPage() {
  const user = await requireRole(["ADMIN"], "/admin/upstream");
  return <UpstreamAdmin overview={await upstreamOverview(user.tenantId)} />;
}
