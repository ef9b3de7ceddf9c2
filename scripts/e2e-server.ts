import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startLocalExternals } from "./dev/external-services";
import { migrate } from "../lib/db/migrate";

// Playwright's webServer: the production build (`next start`) on a migrated, freshly seeded E2E database.

const url = process.env.E2E_DATABASE_URL;
if (!url) {
  console.error("e2e-server needs E2E_DATABASE_URL; run the browser tests with `npm run test:e2e` or `npm test`");
  process.exit(1);
}
const port = process.env.E2E_PORT ?? "3210";
await migrate(url);
// Where the browser tests read the mail the server sent (e2e/fixtures.ts, `emailedLinkPath`): emptied for each run.
const mailDir = path.join(".toolgate", "e2e-mail");
rmSync(mailDir, { recursive: true, force: true });
mkdirSync(mailDir, { recursive: true });
const externals = await startLocalExternals({ mailDir });
const env = {
  ...process.env,
  ...externals.env,
  DATABASE_URL: url,
  NODE_ENV: "production" as const,
  TOOLGATE_KEYS_FILE: path.join(".toolgate", "e2e-keys.json"),
  NEXTAUTH_URL: `http://127.0.0.1:${port}`,
  NEXTAUTH_SECRET: process.env.E2E_NEXTAUTH_SECRET ?? "e2e-only-secret-not-for-production",
  SECRETS_KEY: process.env.SECRETS_KEY ?? Buffer.from("e2e-only-secrets-key-32-bytes!!!").toString("base64"),
  AUDIT_SEAL_KEY: process.env.AUDIT_SEAL_KEY ?? Buffer.from("e2e-only-audit-seal-key-32bytes!").toString("base64"),
  METRICS_TOKEN: process.env.METRICS_TOKEN ?? "e2e-only-metrics-token",
  // The OpenID provider e2e/auth/sso.spec.ts starts on this loopback port, listed so discovery may reach it over http.
  OUTBOUND_ALLOWED_HOSTS: [process.env.OUTBOUND_ALLOWED_HOSTS, `127.0.0.1:${process.env.E2E_OIDC_PORT ?? "3219"}`]
    .filter(Boolean)
    .join(","),
  // The browser tests write the states a reconciliation pass leaves (e2e/approvals/investigations.spec.ts); no pass runs
  // during them to change those states underneath.
  RECONCILE_INTERVAL_MS: "3600000",
};
// Where the browser tests find the fake provider, to count what it refunded and queue its faults.
mkdirSync(".toolgate", { recursive: true });
writeFileSync(
  path.join(".toolgate", "e2e-provider.json"),
  JSON.stringify({ url: externals.env.PAYMENT_PROVIDER_URL ?? process.env.PAYMENT_PROVIDER_URL }),
);
// A real MCP server from npm behind toolgate, over stdio in a folder of its own (e2e/upstream/upstream.spec.ts): the operator's
// file names it for the seeded tenant, and the sync job lists its tools every two seconds.
const upstreamFolder = path.resolve(".toolgate", "e2e-files");
mkdirSync(upstreamFolder, { recursive: true });
writeFileSync(
  path.join(".toolgate", "e2e-upstream.json"),
  JSON.stringify({
    servers: [
      {
        tenant: "acme",
        name: "files",
        command: process.execPath,
        args: [path.resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), upstreamFolder],
      },
    ],
  }),
);
Object.assign(env, {
  UPSTREAM_SERVERS_FILE: path.resolve(".toolgate", "e2e-upstream.json"),
  UPSTREAM_SYNC_INTERVAL_MS: "2000",
});
const tsx = path.join("node_modules", "tsx", "dist", "cli.mjs");
const seeded = spawn(process.execPath, [tsx, "--conditions=react-server", "scripts/seed.ts", "--allow-production"], {
  stdio: "inherit",
  env,
});
const seedCode: number = await new Promise((resolve) => seeded.on("exit", (code) => resolve(code ?? 1)));
if (seedCode !== 0) process.exit(seedCode);

const server = spawn(
  process.execPath,
  [path.join("node_modules", "next", "dist", "bin", "next"), "start", "-H", "127.0.0.1", "-p", port],
  {
    stdio: "inherit",
    env,
  },
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
