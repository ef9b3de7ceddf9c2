import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // pg, the Prisma adapter, prom-client (one registry per process) and the OpenTelemetry SDK stay as Node modules
  // rather than being bundled.
  serverExternalPackages: [
    "pg",
    "@prisma/adapter-pg",
    "prom-client",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/resources",
    "@opentelemetry/exporter-trace-otlp-http",
  ],
  poweredByHeader: false,
  // A self-contained server in .next/standalone for the production image (docs/DEPLOY.md, Dockerfile).
  output: "standalone",
};

export default nextConfig;
