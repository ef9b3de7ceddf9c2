import { readiness } from "@/lib/instance/health";

export const dynamic = "force-dynamic";

/** Readiness: 200 when this instance should get traffic, else 503 naming the failing parts. */
export async function GET(): Promise<Response> {
  const { ready, checks, failing } = await readiness();
  return Response.json(ready ? { status: "ready", checks } : { status: "not-ready", failing, checks }, {
    status: ready ? 200 : 503,
    headers: { "Cache-Control": "no-store" },
  });
}
