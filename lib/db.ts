import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;
export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export function createDb(connectionString: string, options: { countStatements?: boolean } = {}): PrismaClient {
  // The embedded PGlite server serves one connection at a time, so its start script sets the pool to 1.
  const max = Number(process.env.DATABASE_POOL_MAX ?? 10);
  if (!options.countStatements) return new PrismaClient({ adapter: new PrismaPg({ connectionString, max }) });
  // For benchmarks: every statement sent, transaction control included, is counted on `statementCount`.
  const client = new PrismaClient({ adapter: new PrismaPg({ connectionString, max }), log: [{ level: "query", emit: "event" }] });
  const counted = client as PrismaClient & { statementCount: number };
  counted.statementCount = 0;
  client.$on("query", () => {
    counted.statementCount++;
  });
  return client;
}

const globalForDb = globalThis as unknown as { toolgateDb?: PrismaClient };

function instance(): PrismaClient {
  if (!globalForDb.toolgateDb) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set: start the app with `npm run dev`, which provides one");
    globalForDb.toolgateDb = createDb(url);
  }
  return globalForDb.toolgateDb;
}

// Created on first use, not on import, so `next build` can load route modules without a database.
export const db: PrismaClient = new Proxy({} as PrismaClient, {
  get(_target, property) {
    const client = instance();
    const value = Reflect.get(client, property, client);
    return typeof value === "function" ? value.bind(client) : value;
  },
});
