import { Home } from "@/components/layout/home";
import { currentUser } from "@/lib/auth/sign-in/auth";

export const dynamic = "force-dynamic";

const WORKSPACE = { AGENT: "/conversations", SUPERVISOR: "/approvals", ADMIN: "/admin/policy" } as const;

export default async function HomePage({ searchParams }: { searchParams: Promise<{ denied?: string }> }) {
  const user = await currentUser();
  const { denied } = await searchParams;
  return <Home workspace={user ? WORKSPACE[user.role] : null} denied={Boolean(denied)} />;
}
