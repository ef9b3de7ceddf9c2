import { noSuchDiscovery } from "@/lib/agent-api/mcp/guard";
import { publicPreflight } from "@/lib/oauth/cors";

// Discovery addresses other than the two this server publishes (openid-configuration, a suffixed authorization
// server address) answer JSON, never an HTML page.
export const GET = noSuchDiscovery;
export const OPTIONS = publicPreflight("GET");
