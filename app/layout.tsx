import type { ReactNode } from "react";
import "./globals.css";

export const metadata = { title: "toolgate", description: "Human-approval gateway for model tool calls" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
