import type { NextConfig } from "next";
import { API_POLICY, STATIC_SECURITY_HEADERS } from "./lib/security/headers";

// The app's own public host may always send server actions; other hosts only when SERVER_ACTIONS_ALLOWED_ORIGINS
// lists them (read at build and start). proxy.ts checks the same list first and answers 403 instead of a 500.
const publicHost = process.env.NEXTAUTH_URL ? [new URL(process.env.NEXTAUTH_URL).host] : [];
const allowedOrigins = [
  ...publicHost,
  ...(process.env.SERVER_ACTIONS_ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean),
];

const nextConfig: NextConfig = {
  // pg, the Prisma adapter, the argon2 binding, prom-client (one registry per process) and the OpenTelemetry
  // SDK and the Cedar engine (its Node build reads its .wasm file beside it) stay as Node modules rather than being bundled.
  serverExternalPackages: [
    "pg",
    "@prisma/adapter-pg",
    "@node-rs/argon2",
    "prom-client",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/resources",
    "@opentelemetry/exporter-trace-otlp-http",
    "@cedar-policy/cedar-wasm",
  ],
  poweredByHeader: false,
  // The dev server would print every server action's arguments to the terminal: passwords, step-up passwords, bot
  // tokens and webhook secrets among them. No log of this app holds a secret.
  logging: { serverFunctions: false },
  // A self-contained server in .next/standalone for the production image (docs/DEPLOY.md, Dockerfile).
  output: "standalone",
  experimental: { serverActions: { allowedOrigins } },
  // Answers the proxy does not run for (built assets, the agent REST API) still carry the headers that need no
  // request, and the REST API its CSP.
  async headers() {
    return [
      { source: "/:path*", headers: Object.entries(STATIC_SECURITY_HEADERS).map(([key, value]) => ({ key, value })) },
      { source: "/api/v1/:path*", headers: [{ key: "Content-Security-Policy", value: API_POLICY }] },
    ];
  },
};

export default nextConfig;
