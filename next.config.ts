import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // pg, the Prisma adapter and prom-client (one registry per process) stay as Node modules rather than being bundled.
  serverExternalPackages: ["pg", "@prisma/adapter-pg", "@electric-sql/pglite", "prom-client"],
  poweredByHeader: false,
};

export default nextConfig;
