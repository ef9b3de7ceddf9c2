import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cp, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { inject, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { migrate } from "@/lib/db/migrate";
import { freshDatabase } from "../../scripts/pg-cluster";

// The migrations are hand-reviewed SQL (docs/decisions/001); these tests are what keeps them and
// schema.prisma describing the same database.

interface SchemaField {
  name: string;
  type: string;
  optional: boolean;
  list: boolean;
  hasDefault: boolean;
  unique: boolean;
}

const SCALARS: Record<string, string> = {
  String: "text",
  Int: "integer",
  BigInt: "bigint",
  Boolean: "boolean",
  DateTime: "timestamp with time zone",
  Json: "jsonb",
  Bytes: "bytea",
};

function parseSchema(): {
  models: Map<string, SchemaField[]>;
  enums: Set<string>;
  compoundUniques: Map<string, string[][]>;
} {
  const text = readFileSync(path.join(process.cwd(), "prisma", "schema.prisma"), "utf8");
  const enums = new Set([...text.matchAll(/^enum (\w+) \{/gm)].map((match) => match[1]));
  const models = new Map<string, SchemaField[]>();
  const compoundUniques = new Map<string, string[][]>();
  for (const [, name, body] of text.matchAll(/^model (\w+) \{\n([\s\S]*?)^\}/gm)) {
    const fields: SchemaField[] = [];
    const uniques: string[][] = [];
    for (const line of body.split("\n").map((raw) => raw.trim())) {
      const unique = /^@@unique\(\[([^\]]+)\]\)/.exec(line);
      if (unique) uniques.push(unique[1].split(",").map((field) => field.trim()));
      const field = /^(\w+)\s+(\w+)(\[\])?(\?)?(.*)$/.exec(line);
      if (!field || line.startsWith("@@")) continue;
      const [, fieldName, type, list, optional, rest] = field;
      if (!(type in SCALARS) && !enums.has(type)) continue;
      fields.push({
        name: fieldName,
        type,
        list: Boolean(list),
        optional: Boolean(optional),
        hasDefault: rest.includes("@default("),
        unique: rest.includes("@unique") || rest.includes("@id"),
      });
    }
    models.set(name, fields);
    compoundUniques.set(name, uniques);
  }
  return { models, enums, compoundUniques };
}

interface ColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  udt_name: string;
  is_nullable: "YES" | "NO";
  column_default: string | null;
}

describe("the SQL migrations and schema.prisma agree", () => {
  const schema = parseSchema();

  it("has exactly the schema's tables, and each has exactly its model's columns with matching types", async () => {
    const columns = await db.$queryRaw<ColumnRow[]>`
      SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`;
    const tables = new Set(columns.map((column) => column.table_name));
    expect([...tables].sort()).toEqual([...schema.models.keys()].sort());
    expect(Object.values(Prisma.ModelName).sort()).toEqual([...schema.models.keys()].sort());

    for (const [model, fields] of schema.models) {
      const actual = columns.filter((column) => column.table_name === model);
      expect(actual.map((column) => column.column_name).sort(), model).toEqual(
        fields.map((field) => field.name).sort(),
      );
      for (const field of fields) {
        const column = actual.find((candidate) => candidate.column_name === field.name)!;
        const where = `${model}.${field.name}`;
        if (field.list) expect(column.data_type, where).toBe("ARRAY");
        else if (schema.enums.has(field.type)) expect(column.udt_name, where).toBe(field.type);
        else expect(column.data_type, where).toBe(SCALARS[field.type]);
        expect(column.is_nullable === "YES", where).toBe(field.optional || field.list);
        const autoincrement = column.column_default?.startsWith("nextval(") ?? false;
        expect(column.column_default !== null, where).toBe(field.hasDefault || autoincrement);
      }
    }
  });

  it("has a unique index for every @unique, @id and @@unique", async () => {
    const indexes = await db.$queryRaw<{ table: string; columns: string[] }[]>`
      SELECT t.relname AS "table", array_agg(a.attname ORDER BY k.ord)::text[] AS "columns"
      FROM pg_index i
      JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
      CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE i.indisunique AND i.indpred IS NULL
      GROUP BY i.indexrelid, t.relname`;
    const has = (table: string, columns: string[]) =>
      indexes.some((index) => index.table === table && index.columns.join(",") === columns.join(","));
    for (const [model, fields] of schema.models) {
      for (const field of fields.filter((candidate) => candidate.unique))
        expect(has(model, [field.name]), `${model}.${field.name}`).toBe(true);
      for (const compound of schema.compoundUniques.get(model) ?? [])
        expect(has(model, compound), `${model}(${compound})`).toBe(true);
    }
  });

  it("answers a typed query through the generated client that names every model and column", async () => {
    const enums = Prisma as unknown as Record<string, Record<string, string>>;
    for (const model of Object.values(Prisma.ModelName)) {
      const fields = Object.values(enums[`${model}ScalarFieldEnum`]);
      const delegate = (db as unknown as Record<string, { findFirst(args: unknown): Promise<unknown> }>)[
        model.charAt(0).toLowerCase() + model.slice(1)
      ];
      // Throws if any selected column is missing or has another type than the client expects.
      await delegate.findFirst({ select: Object.fromEntries(fields.map((field) => [field, true])) });
    }
  });
});

describe("the migration runner", () => {
  it("records migrations the way prisma migrate deploy does, and a second run applies nothing", async () => {
    const rows = await db.$queryRaw<
      { migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }[]
    >`
      SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations"`;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(row.finished_at).not.toBeNull();
    }
    const again = await migrate(inject("databaseUrl"));
    expect(again.applied).toEqual([]);
  });

  it("refuses to continue when an applied migration was edited", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "toolgate-migrations-"));
    await cp(path.join(process.cwd(), "prisma", "migrations"), dir, { recursive: true });
    const [first] = readdirSync(dir)
      .filter((name) => !name.endsWith(".toml"))
      .sort();
    await writeFile(path.join(dir, first, "migration.sql"), "-- edited\n", { flag: "a" });
    await expect(migrate(inject("databaseUrl"), { dir })).rejects.toThrow(/edited after it was applied/);
  });

  it(
    "run by three instances at once on an empty database (`npm run db:migrate`), applies each migration once",
    { timeout: 90_000 },
    async () => {
      const url = await freshDatabase(inject("databaseUrl"), "toolgate_migrate_race");
      const runs = await Promise.all(Array.from({ length: 3 }, () => npmRun("db:migrate", { DATABASE_URL: url })));
      for (const run of runs) expect(run.code, run.output).toBe(0);
      const names = readdirSync(path.join(process.cwd(), "prisma", "migrations")).filter(
        (name) => !name.endsWith(".toml"),
      );
      // One run applied everything; the other two waited for its lock and found nothing left to do.
      const applied = runs.map((run) => Number(/migrations: (\d+) applied/.exec(run.output)?.[1]));
      expect(applied.sort((a, b) => a - b)).toEqual([0, 0, names.length]);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const recorded = await client.query<{ migration_name: string; times: number }>(
          `SELECT migration_name, count(*)::int AS times FROM "_prisma_migrations" WHERE finished_at IS NOT NULL GROUP BY migration_name`,
        );
        expect(recorded.rows.map((row) => row.migration_name).sort()).toEqual(names.sort());
        expect(recorded.rows.every((row) => row.times === 1)).toBe(true);
      } finally {
        await client.end();
      }
    },
  );
});

function npmRun(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "--silent", script], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe("what a crash keeps", () => {
  it("every table is crash-safe except the rate buckets, which only count the current minute (decision 005)", async () => {
    const tables = await db.$queryRaw<{ relname: string; relpersistence: string }[]>`
      SELECT c.relname, c.relpersistence::text AS relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> '_prisma_migrations'`;
    const unlogged = tables.filter((table) => table.relpersistence === "u").map((table) => table.relname);
    expect(unlogged).toEqual(["RateBucket"]);
    expect(tables.filter((table) => table.relpersistence === "p")).toHaveLength(tables.length - 1);
  });
});

describe("the decision log", () => {
  it("is append-only in the database itself: UPDATE, DELETE and TRUNCATE are refused", async () => {
    const row = await db.decisionLog.create({
      data: {
        tenantId: "t_none",
        toolName: "(unknown)",
        kind: "rejected",
        stage: "parse",
        code: "parse.malformed",
        latencyMs: 1,
      },
    });
    await expect(db.decisionLog.update({ where: { id: row.id }, data: { code: "order.read" } })).rejects.toThrow(
      /append-only/,
    );
    await expect(db.decisionLog.delete({ where: { id: row.id } })).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe(`TRUNCATE "DecisionLog"`)).rejects.toThrow(/append-only/);
    expect(await db.decisionLog.findUnique({ where: { id: row.id } })).toMatchObject({ code: "parse.malformed" });
  });
});
