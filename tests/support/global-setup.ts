import type { TestProject } from "vitest/node";
import { migrate } from "../../lib/migrate";
import { startCluster } from "../../scripts/pg-cluster";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/** One migrated PostgreSQL for the whole run: TEST_DATABASE_URL when given, else a throwaway cluster. */
export default async function setup(project: TestProject) {
  const given = process.env.TEST_DATABASE_URL;
  const cluster = given ? null : await startCluster();
  const url = given ?? cluster!.url;
  await migrate(url);
  project.provide("databaseUrl", url);
  return () => cluster?.stop();
}
