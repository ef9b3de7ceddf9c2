import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { sha256Hex } from "../../canonical";
import { env } from "../../env";
import { logError } from "../../observe/log";
import { decryptSecret } from "../../security/secrets";
import { guardedFetch } from "../../security/outbound";
import { localServer } from "./config";
import type { ServerRow } from "../sql";

// One MCP client per upstream server, kept open between calls and opened again on the next use once its
// connection closes (a stdio server that exited, a remote one that restarted). A remote server is reached only
// through the outbound guard; an older one that speaks only the 2024-11-05 HTTP+SSE transport is tried second.

/** The most an upstream's answer may be before it is refused, whatever it is. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export const upstreamSecretContext = (serverId: string) => `UpstreamServer.secret:${serverId}`;

const open = new Map<string, Promise<Client>>();

/** Same server, same way to reach it: a changed URL or secret opens a new connection. */
const connectionKey = (server: ServerRow) =>
  `${server.id}:${sha256Hex(JSON.stringify([server.transport, server.url, server.headerName, server.secret]))}`;

/** The server's connected client, connecting (again) when there is none. */
export function upstreamClient(server: ServerRow): Promise<Client> {
  const key = connectionKey(server);
  const existing = open.get(key);
  if (existing) return existing;
  // Only this connection's own close forgets it: a newer one under the same key stays.
  const forget = () => {
    if (open.get(key) === connecting) open.delete(key);
  };
  const connecting: Promise<Client> = connect(server, forget);
  open.set(key, connecting);
  connecting.catch(forget);
  return connecting;
}

/**
 * Drops the server's connection after a call whose answer was lost (or a listing that failed): what state it is in
 * is not known (a remote server may have restarted and forgotten its session), so the next use connects afresh.
 */
export function dropUpstreamClient(server: ServerRow): void {
  const key = connectionKey(server);
  const pending = open.get(key);
  open.delete(key);
  pending?.then((client) => client.close()).catch(() => undefined);
}

/** Closes every upstream connection (shutdown, tests). */
export async function closeUpstreams(): Promise<void> {
  const clients = [...open.values()];
  open.clear();
  await Promise.all(clients.map((pending) => pending.then((client) => client.close()).catch(() => undefined)));
}

async function connect(server: ServerRow, forget: () => void): Promise<Client> {
  const timeout = env().UPSTREAM_TIMEOUT_MS;
  if (server.transport === "stdio") return connectWith(stdioTransport(server), forget, timeout);
  const url = new URL(server.url ?? "");
  const headers = secretHeaders(server);
  const fetch = guardedFetch(MAX_ANSWER_BYTES);
  try {
    return await connectWith(
      new StreamableHTTPClientTransport(url, { fetch, requestInit: { headers } }),
      forget,
      timeout,
    );
  } catch (error) {
    // The SDK's backwards-compatible client: a 4xx to the initializing POST means the server predates Streamable HTTP.
    if (!(error instanceof StreamableHTTPError) || (error.code ?? 0) < 400 || (error.code ?? 0) >= 500) throw error;
    return connectWith(new SSEClientTransport(url, { fetch, requestInit: { headers } }), forget, timeout);
  }
}

async function connectWith(transport: Transport, forget: () => void, timeout: number): Promise<Client> {
  const client = new Client({ name: "toolgate", version: "0.1.0" });
  client.onerror = (error) => logError("upstream.transport-error", error);
  await client.connect(transport, { timeout });
  // Set once connected: an attempt that failed (before the SSE fallback) closes without forgetting the one that worked.
  client.onclose = forget;
  return client;
}

function stdioTransport(server: ServerRow): Transport {
  const local = localServer(server.tenantId, server.name);
  if (!local)
    throw new Error(`the local server ${server.name} is not in UPSTREAM_SERVERS_FILE any more; add it back to use it`);
  return new StdioClientTransport({
    command: local.command,
    args: local.args,
    env: { ...getDefaultEnvironment(), ...local.env },
    cwd: local.cwd,
    stderr: "ignore",
  });
}

function secretHeaders(server: ServerRow): Record<string, string> {
  if (!server.secret || !server.headerName) return {};
  const secret = decryptSecret(server.secret, upstreamSecretContext(server.id));
  return { [server.headerName]: server.headerName.toLowerCase() === "authorization" ? `Bearer ${secret}` : secret };
}
