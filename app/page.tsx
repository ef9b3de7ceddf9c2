import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { Home, type DeniedPage } from "@/components/layout/home";
import { currentUser } from "@/lib/auth/sign-in/auth";
import { Role } from "@/lib/generated/prisma/enums";

export const dynamic = "force-dynamic";

const WORKSPACE = { AGENT: "/conversations", SUPERVISOR: "/approvals", ADMIN: "/admin/policy" } as const;

type Query = { denied?: string; for?: string };

/**
 * The page a wrong role was sent back from, as the guard names it. Only a path of this site and known roles are
 * shown, so a crafted link cannot put other words on the front door.
 */
function deniedPage({ denied, for: roles }: Query): DeniedPage | null {
  if (!denied) return null;
  const path = /^\/[A-Za-z0-9/_-]{0,200}$/.test(denied) ? denied : null;
  const forRoles = (roles ?? "").split(",").filter((role): role is Role => Object.hasOwn(Role, role));
  return { path, forRoles };
}

export async function generateMetadata({ searchParams }: { searchParams: Promise<Query> }): Promise<Metadata> {
  return (await searchParams).denied ? { title: { absolute: "Not a page for your role · toolgate" } } : {};
}

export default async function HomePage({ searchParams }: { searchParams: Promise<Query> }) {
  const user = await currentUser();
  const denied = deniedPage(await searchParams);
  // A signed-in person has nothing to do at the front door (where signing in lands) but go on to their own pages.
  if (user && !denied) redirect(WORKSPACE[user.role]);
  return <Home workspace={user ? WORKSPACE[user.role] : null} role={user?.role ?? null} denied={denied} />;
}
