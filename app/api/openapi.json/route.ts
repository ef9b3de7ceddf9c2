import { issuerOf } from "@/lib/auth/keys/access-tokens";
import { PUBLIC_CORS } from "@/lib/oauth/cors";
import { openApiDocument } from "@/lib/openapi/document";

export const dynamic = "force-dynamic";

/** The REST API as OpenAPI 3.1, generated from the routes' zod schemas, for this server's issuer. */
export const GET = (request: Request) =>
  Response.json(openApiDocument(issuerOf(request)), { headers: { "Cache-Control": "no-store", ...PUBLIC_CORS } });
