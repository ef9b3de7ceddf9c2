import { issuerOf } from "@/lib/auth/keys/access-tokens";
import { metadataHeaders, protectedResourceMetadata } from "@/lib/oauth/metadata";
import { PUBLIC_CORS, publicPreflight } from "@/lib/oauth/cors";

export const dynamic = "force-dynamic";

/** The path-suffixed form (RFC 9728 §3.1): only /api/mcp is a protected resource here. */
export async function GET(request: Request, { params }: { params: Promise<{ path: string[] }> }) {
  const { path } = await params;
  if (path.join("/") !== "api/mcp")
    return Response.json(
      { error: { code: "not-found", message: "the only protected resource here is /api/mcp" } },
      { status: 404, headers: PUBLIC_CORS },
    );
  return Response.json(protectedResourceMetadata(issuerOf(request)), { headers: metadataHeaders() });
}

export const OPTIONS = publicPreflight("GET");
