import { errorResponse } from "@/lib/http";
import { env } from "@/lib/env";
import { sameSecret } from "@/lib/security/equal";
import { clientAddress } from "@/lib/security/request";
import { instanceMetrics } from "@/lib/instance/metrics";

export const dynamic = "force-dynamic";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

function authorized(request: Request): boolean {
  const { METRICS_TOKEN: token, NODE_ENV } = env();
  // Production does not start without a token (instrumentation.ts); development without one answers loopback only.
  if (!token) return NODE_ENV !== "production" && LOOPBACK.test(clientAddress(request.headers));
  return sameSecret(request.headers.get("authorization") ?? "", `Bearer ${token}`);
}

/** Prometheus text format, behind `Authorization: Bearer $METRICS_TOKEN`. */
export async function GET(request: Request): Promise<Response> {
  if (!authorized(request)) {
    return errorResponse(401, "metrics.unauthorized", "a valid metrics token is required", {
      "WWW-Authenticate": 'Bearer realm="toolgate-metrics"',
    });
  }
  const { contentType, body } = await instanceMetrics();
  return new Response(body, { headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
}
