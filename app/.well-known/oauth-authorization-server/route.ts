import { issuerOf } from "@/lib/auth/keys/access-tokens";
import { authorizationServerMetadata, metadataHeaders } from "@/lib/oauth/metadata";
import { publicPreflight } from "@/lib/oauth/cors";

export const dynamic = "force-dynamic";

/** RFC 8414 Authorization Server Metadata; the issuer has no path, so this is its only address. */
export const GET = (request: Request) =>
  Response.json(authorizationServerMetadata(issuerOf(request)), { headers: metadataHeaders() });
export const OPTIONS = publicPreflight("GET");
