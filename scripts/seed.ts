import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { createDb } from "../lib/db";
import { DEMO_PASSWORD, SEED, seed } from "./dev/seed-data";

const KEYS_FILE = path.resolve(process.env.TOOLGATE_KEYS_FILE ?? path.join(".toolgate", "dev-keys.json"));

if (process.env.NODE_ENV === "production" && !process.argv.includes("--allow-production")) {
  console.error("refusing to seed demo data with NODE_ENV=production; pass --allow-production if you really mean it");
  process.exit(1);
}
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("db:seed needs DATABASE_URL (npm run dev sets it for the embedded database)");
  process.exit(1);
}

const known = await readFile(KEYS_FILE, "utf8").then(
  (text) => JSON.parse(text) as Record<string, string>,
  () => ({}),
);
const client = createDb(url);
try {
  const { keys, created } = await seed(client, known);
  await mkdir(path.dirname(KEYS_FILE), { recursive: true });
  await writeFile(KEYS_FILE, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  console.log("seeded demo data (development only)");
  for (const tenant of SEED) {
    for (const user of tenant.users)
      console.log(`  ${user.email.padEnd(24)} ${user.role.padEnd(10)} password: ${DEMO_PASSWORD}`);
  }
  for (const [email, key] of Object.entries(keys)) {
    console.log(`  API key ${email.padEnd(18)} ${key}${created.keys.includes(email) ? " (new)" : ""}`);
  }
  console.log(`  keys written to ${path.relative(process.cwd(), KEYS_FILE)}`);
} finally {
  await client.$disconnect();
}
