export const dynamic = "force-dynamic";

/** Liveness: the process answers. Touches no database, so a database outage never restarts healthy instances. */
export function GET(): Response {
  return Response.json({ status: "ok" }, { headers: { "Cache-Control": "no-store" } });
}
