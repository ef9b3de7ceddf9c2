import { issuerOf } from "@/lib/auth/keys/access-tokens";
import { currentSession } from "@/lib/auth/sign-in/auth";
import { decideAuthorization } from "@/lib/oauth/consent/authorize";
import { fetchMetadataDocument } from "@/lib/oauth/clients/fetch-document";
import { fromOwnPage, readForm } from "@/lib/oauth/http";

export const dynamic = "force-dynamic";

const page = (status: number, message: string) =>
  new Response(message, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
  });

/**
 * The consent page's answer. Only from this site's own page (Origin or Sec-Fetch-Site), only for a signed-in person (the session
 * cookie is SameSite=Lax, so another site's form arrives signed out), with the step-up proof the page made in this
 * session when it passes the refund permission on; then a redirect to the client.
 */
export async function POST(request: Request): Promise<Response> {
  if (!fromOwnPage(request, issuerOf(request)))
    return page(403, "This form is accepted only from toolgate's own consent page.");
  const signedIn = await currentSession();
  if (!signedIn) return page(401, "Your session ended. Open the client's sign-in link again.");
  const { user, sessionId } = signedIn;
  const form = await readForm(request);
  if (!form) return page(400, "The form could not be read. Open the client's sign-in link again.");
  const fields = Object.fromEntries(
    [...form.entries()].filter(([name]) => name !== "scope_choice" && name !== "step_up_proof"),
  );
  const holder = { userId: user.id, sessionId, proofId: form.get("step_up_proof") };
  const decision = await decideAuthorization(
    request,
    user,
    fields,
    form.getAll("scope_choice"),
    fetchMetadataDocument,
    holder,
  );
  if (!decision.ok) return page(decision.status, decision.message);
  return new Response(null, { status: 303, headers: { Location: decision.location, "Cache-Control": "no-store" } });
}
