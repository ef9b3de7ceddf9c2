import { z } from "zod";
import { db } from "../../db";
import { newId } from "../../ids";
import { logError } from "../../observe/log";
import { encryptSecret } from "../../security/secrets";
import { checkOutboundUrl, OutboundRefused } from "../../security/outbound";
import { upstreamSecretContext } from "./client";
import { localServers } from "./config";
import { SERVER_NAME, VERDICTS, type Verdict } from "./definition";
import { schemaProblem } from "../calls/validate";
import { findAllServers, findServer, findToolAsSeen, markReviewed, upsertServer, type ServerRow } from "../sql";
import { ListingRefused, syncServer, type SyncReport } from "./sync";

export interface Admin {
  userId: string;
  tenantId: string;
  role: string;
}

type Result<T> = { ok: true; data: T } | { ok: false; code: string; message: string };

const HEADER_NAME = /^[A-Za-z0-9-]{1,100}$/;

export const RemoteServerSchema = z
  .strictObject({
    name: z.string().regex(SERVER_NAME, "lowercase letters, digits and hyphens, starting with a letter, at most 30"),
    url: z.url().max(2000),
    header_name: z.string().regex(HEADER_NAME, "a header name: letters, digits and hyphens").optional(),
    secret: z.string().min(1).max(4000).optional(),
  })
  .refine((input) => (input.header_name === undefined) === (input.secret === undefined), {
    message: "give the header name and its secret together, or neither",
    path: ["secret"],
  });
export type RemoteServer = z.infer<typeof RemoteServerSchema>;

const onlyAdmins = (admin: Admin): Result<never> | null =>
  admin.role === "ADMIN" ? null : { ok: false, code: "forbidden", message: "only admins add servers and review tools" };

/**
 * Adds (or changes) a remote MCP server reached over Streamable HTTP, its header secret stored encrypted, and lists
 * its tools for review; none is exposed until an admin reviews it. The URL must pass the outbound guard.
 */
export async function addRemoteServer(admin: Admin, input: unknown): Promise<Result<SyncReport>> {
  const refused = onlyAdmins(admin);
  if (refused) return refused;
  const parsed = RemoteServerSchema.safeParse(input);
  if (!parsed.success)
    return { ok: false, code: "input.invalid", message: parsed.error.issues.map((issue) => issue.message).join("; ") };
  const { name, url, header_name: headerName, secret } = parsed.data;
  try {
    // Checked as guardedFetch checks every request to the server later: plain http in production never gets through.
    await checkOutboundUrl(url, { signed: true });
  } catch (error) {
    if (error instanceof OutboundRefused) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
  const existing = await findServer(db, admin.tenantId, name);
  if (existing?.transport === "stdio")
    return {
      ok: false,
      code: "server.local",
      message: `${name} is a local server the operator defined; pick another name`,
    };
  const id = existing?.id ?? newId("ups");
  const server = await upsertServer(db, {
    id,
    tenantId: admin.tenantId,
    name,
    transport: "http",
    url,
    headerName: headerName ?? null,
    secret: secret === undefined ? null : encryptSecret(secret, upstreamSecretContext(id)),
  });
  try {
    return { ok: true, data: await syncServer(server) };
  } catch (error) {
    if (error instanceof ListingRefused)
      return {
        ok: false,
        code: error.code,
        message: `${name} is saved, but its tools were not taken: ${error.message}; fix the server, then list its tools again`,
      };
    return {
      ok: false,
      code: "server.unreachable",
      message: `${name} is saved, but its tools could not be listed (${(error as Error).message}); fix the server, then list its tools again`,
    };
  }
}

/**
 * The operator's local servers (UPSTREAM_SERVERS_FILE) as rows, so their tools can be pinned and reviewed. Each on
 * its own: one named like a tenant's remote server, or that cannot be saved, is logged and left out.
 */
export async function registerLocalServers(): Promise<ServerRow[]> {
  const rows: ServerRow[] = [];
  for (const local of localServers()) {
    const fields = { tenantId: local.tenant, server: local.name };
    try {
      const existing = await findServer(db, local.tenant, local.name);
      if (existing && existing.transport !== "stdio") {
        logError(
          "upstream.local-name-taken",
          `UPSTREAM_SERVERS_FILE names ${local.name}, which tenant ${local.tenant} already has as a remote server; the local one is left out`,
          fields,
        );
        continue;
      }
      rows.push(
        await upsertServer(db, {
          id: existing?.id ?? newId("ups"),
          tenantId: local.tenant,
          name: local.name,
          transport: "stdio",
          url: null,
          headerName: null,
          secret: null,
        }),
      );
    } catch (error) {
      logError("upstream.local-register-failed", error, fields);
    }
  }
  return rows;
}

export const ReviewSchema = z.strictObject({
  tool_id: z.string().min(1).max(100),
  definition_hash: z.string().regex(/^[0-9a-f]{64}$/),
  verdict: z.enum(VERDICTS as [Verdict, ...Verdict[]]),
});

const TOOL_CHANGED = {
  ok: false,
  code: "tool.changed",
  message: "this tool's definition changed since the page showed it, or it is not yours: reload and review it again",
} as const;

/**
 * An admin reviews the definition they were shown (named by its hash) and sets allow, hold or deny. Refused when
 * the definition changed since (the new one must be looked at first), and allow or hold when its input schema
 * cannot be checked, since no call to it could then be sent.
 */
export async function reviewTool(admin: Admin, input: unknown): Promise<Result<null>> {
  const refused = onlyAdmins(admin);
  if (refused) return refused;
  const parsed = ReviewSchema.safeParse(input);
  if (!parsed.success)
    return { ok: false, code: "input.invalid", message: parsed.error.issues.map((issue) => issue.message).join("; ") };
  const { tool_id: toolId, definition_hash: seenHash, verdict } = parsed.data;
  const tool = await findToolAsSeen(db, admin.tenantId, toolId, seenHash);
  if (!tool) return TOOL_CHANGED;
  const problem = verdict === "deny" ? null : schemaProblem(seenHash, tool.definition.inputSchema);
  if (problem)
    return {
      ok: false,
      code: "tool.schema-unusable",
      message: `toolgate cannot check calls against this tool's input schema (${problem}), so none could be sent: deny it, or ask the server's owner to change the schema`,
    };
  const reviewed = await markReviewed(db, {
    tenantId: admin.tenantId,
    toolId,
    seenHash,
    verdict,
    reviewerId: admin.userId,
  });
  return reviewed ? { ok: true, data: null } : TOOL_CHANGED;
}

/**
 * The background sync: the operator's local servers registered, then every server's tools listed again, so a
 * definition that changed upstream is quarantined within one interval even if no admin looks. One server that
 * cannot be registered or reached, or an operator's file that cannot be read, does not stop the others.
 */
export async function syncAllServers(): Promise<void> {
  await registerLocalServers().catch((error) => logError("upstream.local-servers-failed", error));
  for (const server of await findAllServers(db)) {
    await syncServer(server).catch((error) => logError("upstream.sync-failed", error, { server: server.name }));
  }
}
