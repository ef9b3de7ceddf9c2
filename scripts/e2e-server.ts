import { spawn } from "node:child_process";
import path from "node:path";
import { startLocalExternals } from "./dev/external-services";
import { migrate } from "../lib/migrate";

// Playwright's webServer: the production build (`next start`) on a migrated, freshly seeded E2E database.

const url = process.env.E2E_DATABASE_URL;
if (!url) {
  console.error("e2e-server needs E2E_DATABASE_URL; run the browser tests with `npm run test:e2e` or `npm test`");
  process.exit(1);
}
const port = process.env.E2E_PORT ?? "3210";
await migrate(url);
const externals = await startLocalExternals();
const env = {
  ...process.env,
  ...externals.env,
  DATABASE_URL: url,
  NODE_ENV: "production" as const,
  TOOLGATE_KEYS_FILE: path.join(".toolgate", "e2e-keys.json"),
  NEXTAUTH_URL: `http://127.0.0.1:${port}`,
  NEXTAUTH_SECRET: process.env.E2E_NEXTAUTH_SECRET ?? "e2e-only-secret-not-for-production",
  SECRETS_KEY: process.env.SECRETS_KEY ?? Buffer.from("e2e-only-secrets-key-32-bytes!!!").toString("base64"),
};
const tsx = path.join("node_modules", "tsx", "dist", "cli.mjs");
const seeded = spawn(process.execPath, [tsx, "scripts/seed.ts", "--allow-production"], { stdio: "inherit", env });
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
