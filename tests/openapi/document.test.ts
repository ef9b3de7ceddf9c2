import { readFileSync } from "node:fs";
import path from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import type { OpenAPIV3_1 } from "openapi-types";
import { describe, expect, it } from "vitest";
import { GET as openApiRoute } from "@/app/api/openapi.json/route";
import { appRoutes, HTTP_METHODS, routeFor, routeModule } from "../support/app-routes";

// GET /api/openapi.json: a valid OpenAPI 3.1 document (checked by a real validator), that describes every route the
// app serves to API clients and no route it does not have.

/** Routes served to the app's own pages or to no client, each with why it is left out of the document. */
const INTERNAL: Record<string, Partial<Record<(typeof HTTP_METHODS)[number], string>>> = {
  "app/api/auth/[...nextauth]/route.ts": {
    GET: "next-auth's sign-in machinery for the app's pages (CSRF, callbacks), not an API",
    POST: "next-auth's sign-in machinery for the app's pages (CSRF, callbacks), not an API",
  },
  "app/api/sso/start/route.ts": { GET: "the sign-in page's redirect to the tenant's identity provider, for people" },
  "app/api/sso/callback/route.ts": { GET: "where the identity provider sends a person back after sign-in, not an API" },
  "app/api/approvals/events/route.ts": { GET: "the approval desk page's live updates (server-sent events)" },
  "app/api/conversations/[id]/events/route.ts": { GET: "the conversation page's live updates (server-sent events)" },
  "app/api/oauth/authorize/route.ts": {
    POST: "the consent page's own form (same origin only); a client starts at the authorization endpoint, a page",
  },
  "app/api/mcp/[...path]/route.ts": {
    GET: "a JSON 404 for discovery addresses under /api/mcp that do not exist",
    POST: "a JSON 404 for discovery addresses under /api/mcp that do not exist",
  },
  "app/.well-known/[...path]/route.ts": { GET: "a JSON 404 for the discovery addresses this server does not publish" },
};
/** A browser's CORS preflight, answered for it; no client calls OPTIONS. */
const PREFLIGHT = "OPTIONS";

async function servedDocument(): Promise<OpenAPIV3_1.Document> {
  const response = await openApiRoute(new Request("http://localhost:3000/api/openapi.json"));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("application/json");
  return (await response.json()) as OpenAPIV3_1.Document;
}

const operations = (document: OpenAPIV3_1.Document) =>
  Object.entries(document.paths ?? {}).flatMap(([template, item]) =>
    HTTP_METHODS.filter((method) => item?.[method.toLowerCase() as "get"]).map((method) => ({
      template,
      method,
      operation: item![method.toLowerCase() as "get"]!,
    })),
  );

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 by @apidevtools/swagger-parser, with one operationId each", async () => {
    const document = await servedDocument();
    expect(document.openapi).toBe("3.1.0");
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeTruthy();
    const ids = operations(document).map(({ operation }) => operation.operationId);
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("names this server's issuer for the OAuth flow and its metadata", async () => {
    const document = await servedDocument();
    const issuer = document.servers![0].url;
    const oauth = document.components!.securitySchemes!.oauth as OpenAPIV3_1.OAuth2SecurityScheme;
    expect(oauth.flows.authorizationCode).toMatchObject({
      authorizationUrl: `${issuer}/oauth/authorize`,
      tokenUrl: `${issuer}/api/oauth/token`,
      scopes: { "orders:read": expect.any(String), "refunds:write": expect.any(String) },
    });
    expect(oauth.description).toContain(`${issuer}/.well-known/oauth-authorization-server`);
    expect(document.paths!["/api/mcp"]!.post!.security).toEqual([{ apiKey: [] }, { oauth: [] }]);
    expect(document.paths!["/api/v1/conversations"]!.post!.security).toEqual([{ apiKey: [] }]);
  });

  it("names the configured issuer whatever the Host, and is never stored by a cache", async () => {
    const forged = () =>
      openApiRoute(new Request("http://localhost:3000/api/openapi.json", { headers: { host: "attacker.example" } }));
    const development = await forged();
    expect(development.headers.get("cache-control")).toBe("no-store");
    expect(((await development.json()) as OpenAPIV3_1.Document).servers).toEqual([{ url: "http://attacker.example" }]);
    process.env.OAUTH_ISSUER = "https://toolgate.example";
    try {
      const configured = await forged();
      expect(configured.headers.get("cache-control")).toBe("no-store");
      const text = await configured.text();
      expect(text).not.toContain("attacker");
      expect((JSON.parse(text) as OpenAPIV3_1.Document).servers).toEqual([{ url: "https://toolgate.example" }]);
    } finally {
      delete process.env.OAUTH_ISSUER;
    }
  });

  it("describes only routes the app has, each served by a route file that exports the method", async () => {
    const document = await servedDocument();
    const routes = appRoutes();
    for (const { template, method } of operations(document)) {
      const where = `${method} ${template}`;
      const found = routeFor(template.replace(/\{(\w+)\}/g, "sample_$1"), routes);
      expect(found, where).not.toBeNull();
      // A {name} of the document is the route's [name], at the same place.
      template.split("/").forEach((part, index) => {
        if (part.startsWith("{")) expect(found!.route.segments[index - 1], where).toBe(`[${part.slice(1, -1)}]`);
      });
      expect(typeof (await routeModule(found!.route))[method], where).toBe("function");
      // Not one of the catch-alls that answer 404 for addresses that do not exist.
      expect(INTERNAL[found!.route.file]?.[method], where).toBeUndefined();
    }
  });

  it("describes every route and method the app serves, but the internal ones listed with their reasons", async () => {
    const document = await servedDocument();
    const routes = appRoutes();
    const described = new Set(
      operations(document).map(
        ({ template, method }) =>
          `${method} ${routeFor(template.replace(/\{(\w+)\}/g, "sample_$1"), routes)!.route.file}`,
      ),
    );
    const missing: string[] = [];
    for (const route of routes) {
      const handlers = await routeModule(route);
      for (const method of HTTP_METHODS.filter((name) => typeof handlers[name] === "function")) {
        if (method === PREFLIGHT || INTERNAL[route.file]?.[method]) continue;
        if (!described.has(`${method} ${route.file}`)) missing.push(`${method} ${route.file}`);
      }
    }
    expect(missing).toEqual([]);
    expect(routes.map((route) => route.file)).toEqual(expect.arrayContaining(Object.keys(INTERNAL)));
  });

  it("answers errors with codes the SPEC names", async () => {
    const document = await servedDocument();
    const spec = readFileSync(path.resolve(import.meta.dirname, "../../docs/SPEC.md"), "utf8");
    const codes = new Set<string>();
    // The routes' {error: {code, message}} bodies and OAuth's {error, error_description}.
    const collect = (value: unknown): void => {
      if (value === null || typeof value !== "object") return;
      const { properties } = value as { properties?: Record<string, { enum?: string[] }> };
      if (properties?.message) properties.code?.enum?.forEach((code) => codes.add(code));
      if (properties?.error_description) properties.error?.enum?.forEach((code) => codes.add(code));
      Object.values(value).forEach(collect);
    };
    collect(document.paths);
    expect(codes.size).toBeGreaterThan(20);
    const unnamed = [...codes].filter(
      (code) => !new RegExp(`[\\s\`(]${code.replace(/\./g, "\\.")}[\\s\`),.:]`).test(spec),
    );
    expect(unnamed).toEqual([]);
  });
});
