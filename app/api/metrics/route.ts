import { timingSafeEqual } from "node:crypto";
import { errorResponse } from "@/lib/agent-api/http";
import { db } from "@/lib/db";
import { metricsText } from "@/lib/metrics";

export const dynamic = "force-dynamic";

function authorized(header: string | null): boolean {
  const token = process.env.METRICS_TOKEN;
  if (!token) return true;
  const expected = Buffer.from(`Bearer ${token}`);
  const given = Buffer.from(header ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Prometheus text format; behind `Authorization: Bearer $METRICS_TOKEN` when that is set. */
export async function GET(request: Request): Promise<Response> {
  if (!authorized(request.headers.get("authorization"))) {
    return errorResponse(401, "metrics.unauthorized", "a valid metrics token is required", {
      "WWW-Authenticate": 'Bearer realm="toolgate-metrics"',
    });
  }
  const { contentType, body } = await metricsText(db);
  return new Response(body, { headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
}
