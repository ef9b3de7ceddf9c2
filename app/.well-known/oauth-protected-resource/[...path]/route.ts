import { isOwnResource, issuerOf } from "@/lib/auth/access-tokens";
import { METADATA_HEADERS, protectedResourceMetadata } from "@/lib/oauth/metadata";
import { PUBLIC_CORS, publicPreflight } from "@/lib/oauth/cors";

export const dynamic = "force-dynamic";

/**
 * The path-suffixed form (RFC 9728 §3.1): /api/mcp, and each conversation's URL under it (/api/mcp/c/<id>), whose
 * `resource` is exactly that URL. Any well-formed id gets its document, so the answer says nothing of which exist.
 */
export async function GET(request: Request, { params }: { params: Promise<{ path: string[] }> }) {
  const issuer = issuerOf(request);
  const resource = `${issuer}/${(await params).path.join("/")}`;
  if (!isOwnResource(issuer, resource))
    return Response.json(
      { error: { code: "not-found", message: "the protected resources here are /api/mcp and /api/mcp/c/<id>" } },
      { status: 404, headers: PUBLIC_CORS },
    );
  return Response.json(protectedResourceMetadata(issuer, resource), { headers: METADATA_HEADERS });
}

export const OPTIONS = publicPreflight("GET");
