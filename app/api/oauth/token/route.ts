import { issuerOf } from "@/lib/auth/keys/access-tokens";
import { oauthError, readForm, tokenHeaders } from "@/lib/oauth/http";
import { fetchMetadataDocument } from "@/lib/oauth/clients/fetch-document";
import { exchangeToken } from "@/lib/oauth/tokens/token";
import { publicPreflight } from "@/lib/oauth/cors";

export const dynamic = "force-dynamic";

/** The token endpoint: form-encoded; PKCE always, and the client's own authentication; answers are never cached. */
export async function POST(request: Request): Promise<Response> {
  const form = await readForm(request);
  if (!form)
    return oauthError(
      400,
      "invalid_request",
      "send application/x-www-form-urlencoded, at most 8 KB, with no NUL character (%00) in it",
    );
  const result = await exchangeToken(form, issuerOf(request), fetchMetadataDocument);
  if (!result.ok) return oauthError(result.status, result.error, result.description);
  return Response.json(result.body, { headers: tokenHeaders });
}

export const OPTIONS = publicPreflight("POST");
