import type { TestProject } from "vitest/node";
import { startLocalExternals } from "../../scripts/dev/external-services";
import { migrate } from "../../lib/db/migrate";
import { startCluster } from "../../scripts/pg-cluster";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    externals: Record<string, string>;
  }
}

/** One migrated PostgreSQL for the whole run (TEST_DATABASE_URL when given, else a throwaway cluster), plus the fake provider and SMTP sink. */
export default async function setup(project: TestProject) {
  const given = process.env.TEST_DATABASE_URL;
  const cluster = given ? null : await startCluster();
  const url = given ?? cluster!.url;
  await migrate(url);
  // Shared by ordinary tests; tests that inject faults or count deliveries start their own (tests/support/externals.ts).
  const externals = await startLocalExternals();
  project.provide("databaseUrl", url);
  project.provide("externals", externals.env);
  return async () => {
    await externals.close();
    cluster?.stop();
  };
}
