import { errorResponse } from "@/lib/http";
import { instanceMetrics } from "@/lib/instance/metrics";
import { fromOperator } from "@/lib/security/operator";

export const dynamic = "force-dynamic";

/** Prometheus text format, behind `Authorization: Bearer $METRICS_TOKEN`. */
export async function GET(request: Request): Promise<Response> {
  if (!fromOperator(request)) {
    return errorResponse(401, "metrics.unauthorized", "a valid metrics token is required", {
      "WWW-Authenticate": 'Bearer realm="toolgate-metrics"',
    });
  }
  const { contentType, body } = await instanceMetrics();
  return new Response(body, { headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
}
