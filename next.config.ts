import type { NextConfig } from "next";
import { STATIC_SECURITY_HEADERS } from "./lib/security/headers";

// The app's own public host may always send server actions; other hosts only when SERVER_ACTIONS_ALLOWED_ORIGINS
// lists them (read at build and start). proxy.ts checks the same list first and answers 403 instead of a 500.
const publicHost = process.env.NEXTAUTH_URL ? [new URL(process.env.NEXTAUTH_URL).host] : [];
const allowedOrigins = [...publicHost, ...(process.env.SERVER_ACTIONS_ALLOWED_ORIGINS ?? "").split(",").map((entry) => entry.trim()).filter(Boolean)];

const nextConfig: NextConfig = {
  // pg and the Prisma adapter stay as Node modules rather than being bundled.
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "@electric-sql/pglite", "@node-rs/argon2"],
  poweredByHeader: false,
  experimental: { serverActions: { allowedOrigins } },
  // Files the proxy does not run for (built assets) still carry the headers that need no request.
  async headers() {
    return [{ source: "/:path*", headers: Object.entries(STATIC_SECURITY_HEADERS).map(([key, value]) => ({ key, value })) }];
  },
};

export default nextConfig;
