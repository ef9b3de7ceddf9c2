import type { ReactNode } from "react";
import { TopNav } from "@/components/layout/top-nav";
import { renderedQueueStamp } from "@/lib/approvals/desk/queue";
import { currentUser } from "@/lib/auth/sign-in/auth";
import "./globals.css";

export const metadata = {
  title: { default: "toolgate", template: "%s · toolgate" },
  description: "Human-approval gateway for model tool calls",
};
export const dynamic = "force-dynamic";

export default async function RootLayout({ children }: { children: ReactNode }) {
  const user = await currentUser();
  const pending = user?.role === "SUPERVISOR" ? (await renderedQueueStamp(user.tenantId)).pending : null;
  return (
    <html lang="en">
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <TopNav user={user} pendingApprovals={pending} />
        {children}
      </body>
    </html>
  );
}
