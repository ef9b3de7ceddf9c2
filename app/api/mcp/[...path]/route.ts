import { noSuchDiscovery } from "@/lib/agent-api/mcp/guard";

// Paths under /api/mcp (a client's discovery of /api/mcp/.well-known/...) answer JSON, never an HTML page.
export const GET = noSuchDiscovery;
export const POST = noSuchDiscovery;
