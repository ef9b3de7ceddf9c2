import { db, type Db } from "../db";
import { metricsText } from "../observe/metrics";
import { readDatabaseGauges } from "./sql";

/** What GET /api/metrics answers: this instance's counters and histograms, and the database's gauges read now. */
export function instanceMetrics(client: Db = db): Promise<{ contentType: string; body: string }> {
  return metricsText(() => readDatabaseGauges(client));
}
