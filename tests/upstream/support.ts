import { writeFileSync } from "node:fs";
import path from "node:path";
import { db } from "@/lib/db";
import { expect } from "vitest";
import { addRemoteServer, registerLocalServers } from "@/lib/upstream/servers/servers";
import { reviewTool } from "@/lib/upstream/servers/servers";
import { syncServer } from "@/lib/upstream/servers/sync";
import { findServer, findServerTools, type ServerRow } from "@/lib/upstream/sql";
import { defaultVerdict, type Verdict } from "@/lib/upstream/servers/definition";
import type { World } from "../support/world";
import type { TestUpstream } from "./test-upstream";

// The real MCP servers from npm the upstream tests put behind toolgate, started the way an operator would.

export const FILESYSTEM_SERVER = path.join(
  process.cwd(),
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);
export const EVERYTHING_SERVER = path.join(
  process.cwd(),
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

/** Writes an UPSTREAM_SERVERS_FILE naming these local servers, points the environment at it and registers them. */
export async function useLocalServers(
  folder: string,
  servers: { tenant: string; name: string; command: string; args: string[] }[],
): Promise<ServerRow[]> {
  const file = path.join(folder, `upstream-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ servers }));
  process.env.UPSTREAM_SERVERS_FILE = file;
  return registerLocalServers();
}

export const adminOf = (world: World) => ({ userId: world.users.admin, tenantId: world.tenantId, role: "ADMIN" });

/** Syncs the server and reviews each named tool as listed, with its default verdict unless one is given. */
export async function reviewAll(
  world: World,
  server: ServerRow,
  verdicts: Record<string, Verdict | "default">,
): Promise<void> {
  await syncServer(server);
  for (const tool of await findServerTools(db, server.id)) {
    const verdict = verdicts[tool.name];
    if (!verdict) continue;
    const reviewed = await reviewTool(adminOf(world), {
      tool_id: tool.id,
      definition_hash: tool.definitionHash,
      verdict: verdict === "default" ? defaultVerdict(tool.definition) : verdict,
    });
    if (!reviewed.ok) throw new Error(reviewed.message);
  }
}

/**
 * The test server added as the tenant's remote server `name` behind its own secret, and its tools reviewed with
 * `verdicts` when given.
 */
export async function addTestServer(
  world: World,
  upstream: TestUpstream,
  name: string,
  verdicts?: Record<string, Verdict | "default">,
): Promise<ServerRow> {
  const added = await addRemoteServer(adminOf(world), {
    name,
    url: upstream.url,
    header_name: "Authorization",
    secret: upstream.secret,
  });
  expect(added.ok).toBe(true);
  const server = (await findServer(db, world.tenantId, name))!;
  if (verdicts) await reviewAll(world, server, verdicts);
  return server;
}
