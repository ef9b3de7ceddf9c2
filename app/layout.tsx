import type { ReactNode } from "react";
import { TopNav } from "@/components/top-nav";
import { currentUser } from "@/lib/auth/auth";
import "./globals.css";

export const metadata = { title: "toolgate", description: "Human-approval gateway for model tool calls" };
export const dynamic = "force-dynamic";

export default async function RootLayout({ children }: { children: ReactNode }) {
  const user = await currentUser();
  return (
    <html lang="en">
      <body>
        <TopNav user={user} />
        {children}
      </body>
    </html>
  );
}
