import { errorResponse } from "@/lib/http";
import { exportDecisionLog } from "@/lib/audit/export";
import { currentUser } from "@/lib/auth/sign-in/auth";

export const dynamic = "force-dynamic";

/** `GET /api/tenants/{tenantId}/decision-log?from=2026-12-01&to=2026-12-03&format=csv|jsonl` for a signed-in supervisor or admin. */
export async function GET(request: Request, { params }: { params: Promise<{ tenantId: string }> }): Promise<Response> {
  const user = await currentUser();
  if (!user) return errorResponse(401, "auth.required", "sign in as a supervisor or admin");
  const exported = await exportDecisionLog(user, (await params).tenantId, new URL(request.url).searchParams);
  if (!exported.ok) return errorResponse(exported.status, exported.code, exported.message);
  const encoder = new TextEncoder();
  const chunks = exported.chunks[Symbol.asyncIterator]();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await chunks.return?.();
    },
  });
  return new Response(body, {
    headers: {
      "Content-Type": exported.contentType,
      "Content-Disposition": `attachment; filename="${exported.filename}"`,
      "Cache-Control": "no-store",
    },
  });
}
