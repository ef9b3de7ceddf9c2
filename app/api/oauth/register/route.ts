import { registerClient } from "@/lib/oauth/clients/clients";
import { oauthError, readJson, tokenHeaders } from "@/lib/oauth/http";
import { clientAddress } from "@/lib/security/request";
import { publicPreflight } from "@/lib/oauth/cors";

export const dynamic = "force-dynamic";

/** Dynamic Client Registration (RFC 7591), rate limited; a tenant's admin decides whether such clients may be granted. */
export async function POST(request: Request): Promise<Response> {
  const body = await readJson(request);
  if (body === undefined)
    return oauthError(
      400,
      "invalid_client_metadata",
      "send a JSON object, at most 8 KB, with no NUL character or unpaired surrogate in it",
    );
  const result = await registerClient(body, clientAddress(request.headers));
  if (!result.ok) return oauthError(result.status, result.error, result.description);
  return Response.json(result.body, { status: 201, headers: tokenHeaders });
}

export const OPTIONS = publicPreflight("POST");
