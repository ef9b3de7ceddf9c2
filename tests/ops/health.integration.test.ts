import { afterEach, describe, expect, it } from "vitest";
import { GET as healthRoute } from "@/app/api/health/route";
import { GET as readyRoute } from "@/app/api/ready/route";
import { createDb, db } from "@/lib/db";
import { jobsProblem, startJobs, stopJobs } from "@/lib/instance/jobs";

// GET /api/health and GET /api/ready through their route handlers, against the suite's real PostgreSQL.

const globalForDb = globalThis as unknown as { toolgateDb?: typeof db };

async function ready() {
  const response = await readyRoute();
  return {
    status: response.status,
    json: (await response.json()) as { status: string; failing?: string[]; checks: Record<string, string> },
  };
}

afterEach(() => {
  process.env.TOOLGATE_JOBS = "off";
});

describe("GET /api/health", () => {
  it("answers 200 without asking the database", async () => {
    const real = globalForDb.toolgateDb;
    globalForDb.toolgateDb = createDb("postgresql://nobody@127.0.0.1:1/none");
    try {
      const response = healthRoute();
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: "ok" });
    } finally {
      await globalForDb.toolgateDb.$disconnect();
      globalForDb.toolgateDb = real;
    }
  });
});

describe("GET /api/ready", () => {
  it("is ready with the database migrated and jobs off by configuration", async () => {
    const { status, json } = await ready();
    expect(status).toBe(200);
    expect(json).toEqual({
      status: "ready",
      checks: { database: "ok", migrations: "ok", jobs: "off", shutdown: "ok" },
    });
  });

  it("names the database when it cannot be reached, and nothing of the driver's error", async () => {
    const real = globalForDb.toolgateDb;
    globalForDb.toolgateDb = createDb("postgresql://nobody@127.0.0.1:1/none");
    try {
      const { status, json } = await ready();
      expect(status).toBe(503);
      expect(json.failing).toEqual(["database"]);
      expect(json.checks.database).toBe("database unreachable");
      expect(JSON.stringify(json)).not.toMatch(/nobody|127\.0\.0\.1|ECONNREFUSED|:1\b/);
    } finally {
      await globalForDb.toolgateDb.$disconnect();
      globalForDb.toolgateDb = real;
    }
  });

  it("names the migrations when one in the build is not applied, with its name", async () => {
    const [latest] = await db.$queryRaw<
      { name: string }[]
    >`SELECT "migration_name" AS name FROM "_prisma_migrations" ORDER BY "migration_name" DESC LIMIT 1`;
    await db.$executeRaw`UPDATE "_prisma_migrations" SET "rolled_back_at" = now() WHERE "migration_name" = ${latest.name}`;
    try {
      const { status, json } = await ready();
      expect(status).toBe(503);
      expect(json.failing).toEqual(["migrations"]);
      expect(json.checks.migrations).toBe(`1 not applied: ${latest.name}`);
    } finally {
      await db.$executeRaw`UPDATE "_prisma_migrations" SET "rolled_back_at" = NULL WHERE "migration_name" = ${latest.name}`;
    }
    expect((await ready()).status).toBe(200);
  });

  it("names the jobs when they should run and do not: before they start and once they are stopped", async () => {
    process.env.TOOLGATE_JOBS = "on";
    let { status, json } = await ready();
    expect(status).toBe(503);
    expect(json).toMatchObject({ failing: ["jobs"], checks: { jobs: "background jobs have not started" } });

    startJobs();
    ({ status, json } = await ready());
    expect(status).toBe(200);
    expect(json.checks.jobs).toBe("ok");

    const key = process.env.AUDIT_SEAL_KEY;
    delete process.env.AUDIT_SEAL_KEY;
    ({ status, json } = await ready());
    process.env.AUDIT_SEAL_KEY = key;
    expect(status).toBe(503);
    expect(json).toMatchObject({
      failing: ["jobs"],
      checks: { jobs: "AUDIT_SEAL_KEY is not set: the audit logs are not being sealed" },
    });

    await stopJobs();
    ({ status, json } = await ready());
    expect(status).toBe(503);
    expect(json).toMatchObject({ failing: ["jobs"], checks: { jobs: "background jobs are stopped (shutting down)" } });
    expect(jobsProblem()).toBe("background jobs are stopped (shutting down)");
  });
});
