import { afterEach, describe, expect, it, vi } from "vitest";
import { GET as healthRoute } from "@/app/api/health/route";
import { GET as readyRoute } from "@/app/api/ready/route";
import { createDb, db } from "@/lib/db";
import { jobsProblem, startJobs, stopJobs } from "@/lib/instance/jobs";

// GET /api/health and GET /api/ready through their route handlers, against the suite's real PostgreSQL.

const globalForDb = globalThis as unknown as { toolgateDb?: typeof db };

const TOKEN = "ready-operator-token-0123456789";

/** As an operator (the metrics token) unless `headers` say otherwise; from an address that is not loopback. */
async function ready(headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) {
  process.env.METRICS_TOKEN = TOKEN;
  const response = await readyRoute(
    new Request("http://toolgate.test/api/ready", { headers: { "x-forwarded-for": "203.0.113.7", ...headers } }),
  );
  return {
    status: response.status,
    json: (await response.json()) as { status: string; failing?: string[]; checks: Record<string, string> },
  };
}

/** Runs `work` with the latest migration marked rolled back in `_prisma_migrations`, handing it its name. */
async function withLatestMigrationPending(work: (name: string) => Promise<void>) {
  const [latest] = await db.$queryRaw<
    { name: string }[]
  >`SELECT "migration_name" AS name FROM "_prisma_migrations" ORDER BY "migration_name" DESC LIMIT 1`;
  await db.$executeRaw`UPDATE "_prisma_migrations" SET "rolled_back_at" = now() WHERE "migration_name" = ${latest.name}`;
  try {
    await work(latest.name);
  } finally {
    await db.$executeRaw`UPDATE "_prisma_migrations" SET "rolled_back_at" = NULL WHERE "migration_name" = ${latest.name}`;
  }
}

afterEach(() => {
  process.env.TOOLGATE_JOBS = "off";
  delete process.env.METRICS_TOKEN;
  vi.restoreAllMocks();
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
    await withLatestMigrationPending(async (name) => {
      const { status, json } = await ready();
      expect(status).toBe(503);
      expect(json.failing).toEqual(["migrations"]);
      expect(json.checks.migrations).toBe(`1 not applied: ${name}`);
    });
    expect((await ready()).status).toBe(200);
  });

  it("tells anyone without the metrics token only whether it is ready, and logs what is not once, until it changes", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void lines.push(String(line)));
    const anonymous: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: TOKEN },
      { "x-forwarded-for": "127.0.0.1" },
    ];
    for (const headers of anonymous) expect(await ready(headers)).toEqual({ status: 200, json: { status: "ready" } });
    expect(lines).toEqual([]);

    await withLatestMigrationPending(async (name) => {
      for (const headers of anonymous)
        expect(await ready(headers)).toEqual({ status: 503, json: { status: "not-ready" } });
      expect((await ready()).json.checks.migrations).toBe(`1 not applied: ${name}`);
      // Five probes of one state: one line, however often a load balancer asks.
      expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
        expect.objectContaining({
          event: "ready.not-ready",
          failing: ["migrations"],
          checks: expect.objectContaining({ migrations: `1 not applied: ${name}` }),
        }),
      ]);
    });
    for (const headers of anonymous) expect((await ready(headers)).status).toBe(200);
    expect(lines.slice(1).map((line) => (JSON.parse(line) as Record<string, unknown>).event)).toEqual([
      "ready.ready-again",
    ]);
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
    const anonymous = await ready({});
    process.env.AUDIT_SEAL_KEY = key;
    expect(anonymous).toEqual({ status: 503, json: { status: "not-ready" } });
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
