import { readdirSync } from "node:fs";
import path from "node:path";

// The App Router's route files (app/**/route.ts) and which of them serves a path, by Next's own precedence: a
// static segment before a [param], a [param] before a [...catchAll]. The OpenAPI tests walk these.

const APP = path.resolve(import.meta.dirname, "../../app");
export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

export interface AppRoute {
  /** The file relative to the repository, e.g. app/api/v1/tool-calls/[id]/route.ts. */
  file: string;
  segments: string[];
}

export function appRoutes(): AppRoute[] {
  return readdirSync(APP, { recursive: true, encoding: "utf8" })
    .filter((file) => path.basename(file) === "route.ts")
    .map((file) => ({
      file: path.join("app", file).split(path.sep).join("/"),
      // A route group, (name), is no part of the URL.
      segments: path
        .dirname(file)
        .split(path.sep)
        .filter((segment) => segment !== "." && !/^\(.*\)$/.test(segment)),
    }))
    .sort((a, b) => a.file.localeCompare(b.file));
}

const rank = (segment: string) => (segment.startsWith("[...") ? 2 : segment.startsWith("[") ? 1 : 0);

function match(segments: string[], parts: string[]): Record<string, string | string[]> | null {
  const params: Record<string, string | string[]> = {};
  for (const [index, segment] of segments.entries()) {
    if (segment.startsWith("[...")) {
      const rest = parts.slice(index);
      if (rest.length === 0) return null;
      params[segment.slice(4, -1)] = rest;
      return params;
    }
    const part = parts[index];
    if (part === undefined) return null;
    if (segment.startsWith("[")) params[segment.slice(1, -1)] = decodeURIComponent(part);
    else if (segment !== part) return null;
  }
  return segments.length === parts.length ? params : null;
}

/** The route file that serves `pathname`, with its params, as Next would pick it; null when none does. */
export function routeFor(pathname: string, routes = appRoutes()) {
  const parts = pathname.split("/").filter(Boolean);
  const candidates = routes
    .map((route) => ({ route, params: match(route.segments, parts) }))
    .filter((candidate) => candidate.params !== null);
  candidates.sort((a, b) => {
    for (let i = 0; i < Math.max(a.route.segments.length, b.route.segments.length); i++) {
      const difference = rank(a.route.segments[i] ?? "") - rank(b.route.segments[i] ?? "");
      if (difference !== 0) return difference;
    }
    return 0;
  });
  const best = candidates[0];
  return best ? { route: best.route, params: best.params as Record<string, string | string[]> } : null;
}

type Handler = (request: Request, context: { params: Promise<Record<string, string | string[]>> }) => Promise<Response>;

/** The route module of a file, as Next imports it. */
export const routeModule = (route: AppRoute) =>
  import(/* @vite-ignore */ path.resolve(APP, "..", route.file)) as Promise<Partial<Record<string, Handler>>>;

/**
 * A `fetch` that serves each request with the real route handler of its path, in process: what `next start` would
 * call, without the server around it.
 */
export function routedFetch(routes = appRoutes()) {
  return async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request && init === undefined ? input : new Request(input, init);
    const found = routeFor(new URL(request.url).pathname, routes);
    const handler = found && (await routeModule(found.route))[request.method];
    if (!found || !handler) return new Response("no such route", { status: 404 });
    return handler(request, { params: Promise.resolve(found.params) });
  };
}
