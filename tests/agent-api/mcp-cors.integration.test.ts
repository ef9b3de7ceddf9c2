import { describe, expect, it } from "vitest";
import { OPTIONS as mcpOptions } from "@/app/api/mcp/route";
import { OPTIONS as registerOptions, POST as registerRoute } from "@/app/api/oauth/register/route";
import { OPTIONS as tokenOptions, POST as tokenRoute } from "@/app/api/oauth/token/route";
import { GET as asMetadata, OPTIONS as asMetadataOptions } from "@/app/.well-known/oauth-authorization-server/route";
import { OPTIONS as prmOptions } from "@/app/.well-known/oauth-protected-resource/route";
import { conversationFor } from "../support/api";
import { MCP_BASE, routeFetch } from "../support/mcp-route";
import { createWorld } from "../support/world";

// What a browser-based MCP client (an inspector on localhost, a web IDE on an allowed origin) needs from /api/mcp,
// the token and registration endpoints and the discovery documents: preflights that allow only the headers
// these use, no credentials anywhere, and a foreign origin refused on /api/mcp.

const LOCAL_PAGE = "http://localhost:6274";

const preflight = (path: string, origin: string, headers: string) =>
  new Request(new URL(path, MCP_BASE), {
    method: "OPTIONS",
    headers: {
      host: new URL(MCP_BASE).host,
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": headers,
    },
  });

describe("CORS on /api/mcp", () => {
  it("answers a preflight from an allowed origin with that origin, the MCP request headers and no credentials", async () => {
    const response = mcpOptions(preflight("/api/mcp", LOCAL_PAGE, "authorization,content-type,mcp-method,mcp-name"));
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(LOCAL_PAGE);
    expect(response.headers.get("access-control-allow-methods")).toBe("POST");
    const allowed = response.headers.get("access-control-allow-headers")!.toLowerCase().split(", ");
    expect(allowed).toEqual(
      expect.arrayContaining(["authorization", "mcp-protocol-version", "mcp-method", "mcp-name"]),
    );
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
    expect(response.headers.get("vary")).toBe("Origin");
  });

  it("refuses a preflight from a foreign origin with the DNS-rebinding guard's 403 and no CORS headers", async () => {
    const response = mcpOptions(preflight("/api/mcp", "https://evil.example", "authorization"));
    expect(response.status).toBe(403);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("lets the allowed page read a 401's WWW-Authenticate and an answer's body", async () => {
    const world = await createWorld();
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const url = new URL(`/api/mcp?conversation=${conversation}`, MCP_BASE);
    const init = (authorization?: string): RequestInit => ({
      method: "POST",
      headers: {
        origin: LOCAL_PAGE,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    const unauthorized = await routeFetch(url, init());
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe(LOCAL_PAGE);
    expect(unauthorized.headers.get("access-control-expose-headers")).toBe("WWW-Authenticate");
    expect(unauthorized.headers.get("www-authenticate")).toMatch(/resource_metadata=/);
    const answered = await routeFetch(url, init(`Bearer ${world.keys.agent}`));
    expect(answered.status).toBe(200);
    expect(answered.headers.get("access-control-allow-origin")).toBe(LOCAL_PAGE);
    expect(answered.headers.get("access-control-allow-credentials")).toBeNull();
  });
});

describe("CORS on the OAuth endpoints and discovery documents", () => {
  it("lets any page post to token and registration and read their errors, without credentials", async () => {
    for (const options of [tokenOptions, registerOptions]) {
      const response = options();
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("access-control-allow-methods")).toBe("POST");
      expect(response.headers.get("access-control-allow-headers")).toBe("Content-Type, MCP-Protocol-Version");
      expect(response.headers.get("access-control-allow-credentials")).toBeNull();
    }
    const token = await tokenRoute(
      new Request(new URL("/api/oauth/token", MCP_BASE), {
        method: "POST",
        headers: { origin: LOCAL_PAGE },
        body: "x",
      }),
    );
    expect(token.status).toBe(400);
    expect(token.headers.get("access-control-allow-origin")).toBe("*");
    expect(token.headers.get("cache-control")).toBe("no-store");
    const register = await registerRoute(
      new Request(new URL("/api/oauth/register", MCP_BASE), { method: "POST", body: "[]" }),
    );
    expect(register.status).toBe(400);
    expect(register.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("answers the metadata documents' preflight (MCP clients send MCP-Protocol-Version) and the documents to any page", async () => {
    for (const options of [asMetadataOptions, prmOptions]) {
      const response = options();
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-methods")).toBe("GET");
      expect(response.headers.get("access-control-allow-headers")).toContain("MCP-Protocol-Version");
    }
    const metadata = asMetadata(new Request(new URL("/.well-known/oauth-authorization-server", MCP_BASE)));
    expect(metadata.headers.get("access-control-allow-origin")).toBe("*");
  });
});
