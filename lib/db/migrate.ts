import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";

// Applies prisma/migrations/*/migration.sql in name order and records each in `_prisma_migrations`
// exactly as `prisma migrate deploy` does, so either tool can continue the same history.
// Why not Prisma's own: docs/decisions/001-migrations-as-reviewed-sql.md.

const MIGRATIONS_DIR = path.join(process.cwd(), "prisma", "migrations");
// Held for the whole run: instances that migrate on every deploy wait for each other, then find nothing left to
// apply. The id is the one Prisma's migration engine takes, so the two tools never run at once either.
const PRISMA_MIGRATE_LOCK = 72707369;

export interface MigrationResult {
  applied: string[];
  skipped: string[];
}

// What the app's role may do when migrations run as a separate owner: read and write the tables, never change the
// logs and their seals once written, never touch the migration history. Owning nothing, it cannot disable a trigger
// or drop a table either (docs/decisions/016).
const APP_GRANTS = [
  "GRANT USAGE ON SCHEMA public TO {role}",
  "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
  "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}",
  'REVOKE UPDATE, DELETE, TRUNCATE ON "DecisionLog", "AuditLog", "DecisionSeal" FROM {role}',
  'REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON "_prisma_migrations" FROM {role}',
];

export interface MigrateOptions {
  dir?: string;
  /** The role the app connects as, when it is not the one migrating: given exactly the grants it needs. */
  appRole?: string;
}

/** The role a connection string signs in as. */
export const roleOf = (connectionString: string): string => decodeURIComponent(new URL(connectionString).username);

export async function migrate(
  connectionString: string,
  { dir = MIGRATIONS_DIR, appRole }: MigrateOptions = {},
): Promise<MigrationResult> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);
    const done = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT "migration_name", "checksum", "finished_at" FROM "_prisma_migrations" WHERE "rolled_back_at" IS NULL`,
    );
    const recorded = new Map(done.rows.map((row) => [row.migration_name, row]));
    const result: MigrationResult = { applied: [], skipped: [] };

    for (const name of await migrationNames(dir)) {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      const previous = recorded.get(name);
      if (previous) {
        if (!previous.finished_at)
          throw new Error(`migration ${name} started earlier and did not finish; resolve it by hand`);
        if (previous.checksum !== checksum)
          throw new Error(`migration ${name} was edited after it was applied (checksum differs)`);
        result.skipped.push(name);
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" ("id", "checksum", "finished_at", "migration_name", "started_at", "applied_steps_count")
           VALUES ($1, $2, now(), $3, now(), 1)`,
          [randomUUID(), checksum, name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
      result.applied.push(name);
    }
    if (appRole && appRole !== roleOf(connectionString)) {
      const role = client.escapeIdentifier(appRole);
      for (const grant of APP_GRANTS) await client.query(grant.replace("{role}", role));
    }
    return result;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    await client.end();
  }
}

/** The migrations in `dir` that the database has not finished applying (the readiness check's question). */
export async function pendingMigrations(applied: () => Promise<string[]>, dir = MIGRATIONS_DIR): Promise<string[]> {
  const done = new Set(await applied());
  return (await migrationNames(dir)).filter((name) => !done.has(name));
}

async function migrationNames(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}
