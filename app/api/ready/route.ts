import { readiness } from "@/lib/instance/health";
import { fromOperator } from "@/lib/security/operator";

export const dynamic = "force-dynamic";

/**
 * Readiness: 200 when this instance should get traffic, else 503. Only an operator (the metrics token) reads which
 * parts fail and why; a load balancer needs the status alone, and anyone else would learn the deployment's state.
 */
export async function GET(request: Request): Promise<Response> {
  const { ready, checks, failing } = await readiness();
  const status = ready ? "ready" : "not-ready";
  const body = !fromOperator(request) ? { status } : ready ? { status, checks } : { status, failing, checks };
  return Response.json(body, { status: ready ? 200 : 503, headers: { "Cache-Control": "no-store" } });
}
