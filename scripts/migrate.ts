import { migrate, roleOf } from "../lib/db/migrate";

// `npm run db:migrate`. With MIGRATION_DATABASE_URL, migrations run as that (owner) role and the role of
// DATABASE_URL, the app's, is granted only what the app needs (docs/decisions/016); with DATABASE_URL alone they run
// as it, as in development.
const appUrl = process.env.DATABASE_URL;
const ownerUrl = process.env.MIGRATION_DATABASE_URL ?? appUrl;
if (!ownerUrl) {
  console.error(
    "db:migrate needs DATABASE_URL, and MIGRATION_DATABASE_URL when the tables' owner is not the app's role (npm run dev sets it for the embedded database)",
  );
  process.exit(1);
}
const appRole = appUrl ? roleOf(appUrl) : undefined;
const { applied, skipped } = await migrate(ownerUrl, { appRole });
console.log(
  `migrations: ${applied.length} applied${applied.length ? ` (${applied.join(", ")})` : ""}, ${skipped.length} already applied${appRole && appRole !== roleOf(ownerUrl) ? `; granted the app's role ${appRole} what it needs` : ""}`,
);
