import Link from "next/link";
import type { Role } from "@/lib/generated/prisma/enums";

/** A page the person's role may not open: its path and the roles it is for, when the guard named them. */
export interface DeniedPage {
  path: string | null;
  forRoles: Role[];
}

const PEOPLE: Record<Role, string> = { AGENT: "agents", SUPERVISOR: "supervisors", ADMIN: "admins" };

function deniedWords({ path, forRoles }: DeniedPage, role: Role | null): string {
  const yours = role ? `Your role, ${role.toLowerCase()},` : "Your role";
  const page = path ? path : "that page";
  const whose = forRoles.length > 0 ? `: it is for ${forRoles.map((r) => PEOPLE[r]).join(" and ")}` : "";
  return `${yours} cannot open ${page}${whose}.`;
}

/** The front door: what toolgate does, and the way in (sign in, or the workspace of the person's role). */
export function Home({
  workspace,
  role,
  denied,
}: {
  workspace: string | null;
  role: Role | null;
  denied: DeniedPage | null;
}) {
  return (
    <main id="main">
      <h1>toolgate</h1>
      {denied && (
        <p className="notice" role="alert">
          {deniedWords(denied, role)} {workspace && "Your own pages start at the link below."}
        </p>
      )}
      <p>
        A model only proposes a tool call; toolgate decides, executes what is allowed, holds what is consequential for a
        supervisor, and records every decision.
      </p>
      {workspace ? (
        <p>
          <Link href={workspace}>Continue to your workspace</Link>
        </p>
      ) : (
        <p>
          <Link href="/login">Sign in</Link>
        </p>
      )}
    </main>
  );
}
