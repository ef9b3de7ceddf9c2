import { noSuchDiscovery } from "@/lib/agent-api/mcp/guard";
import { publicPreflight } from "@/lib/oauth/cors";

// Paths under /api/mcp (a client's discovery of /api/mcp/.well-known/...) answer JSON, never an HTML page.
export const GET = noSuchDiscovery;
export const POST = noSuchDiscovery;
export const OPTIONS = publicPreflight("GET");
