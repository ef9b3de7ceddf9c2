import { migrate } from "../lib/migrate";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("db:migrate needs DATABASE_URL (npm run dev sets it for the embedded database)");
  process.exit(1);
}
const { applied, skipped } = await migrate(url);
console.log(
  `migrations: ${applied.length} applied${applied.length ? ` (${applied.join(", ")})` : ""}, ${skipped.length} already applied`,
);
