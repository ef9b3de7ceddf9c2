import type { ReactNode } from "react";
import { TopNav } from "@/components/top-nav";
import { pendingCount } from "@/lib/approvals/queue";
import { currentUser } from "@/lib/auth/auth";
import "./globals.css";

export const metadata = { title: "toolgate", description: "Human-approval gateway for model tool calls" };
export const dynamic = "force-dynamic";

export default async function RootLayout({ children }: { children: ReactNode }) {
  const user = await currentUser();
  const pending = user?.role === "SUPERVISOR" ? await pendingCount(user.tenantId) : null;
  return (
    <html lang="en">
      <body>
        <TopNav user={user} pendingApprovals={pending} />
        {children}
      </body>
    </html>
  );
}
