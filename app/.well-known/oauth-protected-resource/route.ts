import { issuerOf } from "@/lib/auth/keys/access-tokens";
import { metadataHeaders, protectedResourceMetadata } from "@/lib/oauth/metadata";
import { publicPreflight } from "@/lib/oauth/cors";

export const dynamic = "force-dynamic";

/** RFC 9728 Protected Resource Metadata of /api/mcp (also at the path-suffixed address). */
export const GET = (request: Request) =>
  Response.json(protectedResourceMetadata(issuerOf(request)), { headers: metadataHeaders() });
export const OPTIONS = publicPreflight("GET");
