import { createDb } from "@/lib/db";

// Counts every statement the process sends to PostgreSQL, through Prisma or straight to its pool, BEGIN and COMMIT
// included (`createDb`'s `countStatements`): the benchmarks' count per call and the test that keeps it low.

export interface StatementCounter {
  /** Statements sent since the counting client was installed. */
  statements(): number;
  /** How many statements `work` sent. */
  statementsOf(work: () => Promise<unknown>): Promise<number>;
  stop(): Promise<void>;
}

/** Installs a counting client as the process's one database client (`db` reads it on every use). */
export function countStatements(url: string): StatementCounter {
  const client = createDb(url, { countStatements: true });
  const global = globalThis as unknown as { toolgateDb?: unknown };
  const previous = global.toolgateDb;
  global.toolgateDb = client;
  const statements = () => (client as unknown as { statementCount: number }).statementCount;
  return {
    statements,
    async statementsOf(work) {
      const before = statements();
      await work();
      return statements() - before;
    },
    async stop() {
      global.toolgateDb = previous;
      await client.$disconnect();
    },
  };
}
