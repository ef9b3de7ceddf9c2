import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // pg and the Prisma adapter stay as Node modules rather than being bundled.
  serverExternalPackages: ["pg", "@prisma/adapter-pg"],
  poweredByHeader: false,
};

export default nextConfig;
