import { oauthNotOffered } from "@/lib/agent-api/mcp/guard";

// OAuth discovery (/.well-known/oauth-protected-resource, oauth-authorization-server, openid-configuration, with
// or without the /api/mcp suffix) answers JSON, so an MCP client learns it must send an API key.
export const GET = oauthNotOffered;
