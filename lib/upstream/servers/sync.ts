import { db, transaction, type Db } from "../../db";
import { env } from "../../env";
import { newId } from "../../ids";
import { dropUpstreamClient, upstreamClient } from "./client";
import { defaultVerdict, isToolName, pinDefinition, type ListedTool, type ToolStatus } from "./definition";
import {
  changeToolDefinition,
  findServerTools,
  insertTool,
  markListingRefused,
  markServerSynced,
  type ServerRow,
} from "../sql";

export interface SyncReport {
  added: string[];
  quarantined: string[];
  unchanged: string[];
}

const MAX_PAGES = 20;
/** The most tools toolgate takes from one server, the longest description and the largest definition (JSON). */
export const MAX_TOOLS = 500;
export const MAX_DESCRIPTION_CHARS = 10_000;
export const MAX_DEFINITION_BYTES = 64 * 1024;

/** Everything the server lists now, page by page. */
async function listTools(server: ServerRow): Promise<ListedTool[]> {
  const timeout = env().UPSTREAM_TIMEOUT_MS;
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const client = await upstreamClient(server);
    const answer = await client.listTools(cursor ? { cursor } : {}, { timeout });
    tools.push(...(answer.tools as ListedTool[]));
    cursor = answer.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/** A listing toolgate does not take, with the reason the admin page shows; the server's tools stay as they were. */
export class ListingRefused extends Error {
  readonly code = "server.listing-refused";
}

/** Why the listing cannot be taken as a whole (too many tools, a name twice, a definition too large), or null. */
function listingProblem(listed: ListedTool[]): string | null {
  if (listed.length > MAX_TOOLS)
    return `the server lists ${listed.length} tools, more than the ${MAX_TOOLS} toolgate takes from one server`;
  const seen = new Set<string>();
  for (const tool of listed) {
    if (seen.has(tool.name)) return `the server lists a tool named ${JSON.stringify(tool.name)} more than once`;
    seen.add(tool.name);
    if ((tool.description?.length ?? 0) > MAX_DESCRIPTION_CHARS)
      return `the description of ${JSON.stringify(tool.name)} is longer than the ${MAX_DESCRIPTION_CHARS} characters toolgate takes`;
    const bytes = Buffer.byteLength(JSON.stringify(pinDefinition(tool).definition));
    if (bytes > MAX_DEFINITION_BYTES)
      return `the definition of ${JSON.stringify(tool.name)} is ${bytes} bytes, more than the ${MAX_DEFINITION_BYTES} toolgate takes`;
  }
  return null;
}

/**
 * Pins what the server lists against what was reviewed: a new tool waits for review; a reviewed tool whose
 * definition changed is quarantined (the reviewed definition kept for the diff) until an admin reviews the change;
 * one that changed back to what was reviewed is reviewed again. Nothing the server says exposes a tool by itself.
 * The listing is taken whole, in one transaction, or not at all (`ListingRefused`, its reason kept on the server).
 */
export async function syncServer(server: ServerRow): Promise<SyncReport> {
  const listed = await listTools(server).catch((error: unknown) => {
    dropUpstreamClient(server);
    throw error;
  });
  const problem = listingProblem(listed.filter((candidate) => isToolName(candidate.name)));
  if (problem) {
    await markListingRefused(db, server.id, problem);
    throw new ListingRefused(problem);
  }
  return transaction((tx) => pinListing(tx, server, listed));
}

async function pinListing(tx: Db, server: ServerRow, listed: ListedTool[]): Promise<SyncReport> {
  const known = new Map((await findServerTools(tx, server.id)).map((tool) => [tool.name, tool]));
  const report: SyncReport = { added: [], quarantined: [], unchanged: [] };
  for (const tool of listed.filter((candidate) => isToolName(candidate.name))) {
    const { definition, hash } = pinDefinition(tool);
    const pinned = known.get(tool.name);
    if (!pinned) {
      await insertTool(tx, {
        id: newId("utool"),
        tenantId: server.tenantId,
        serverId: server.id,
        name: tool.name,
        definition,
        definitionHash: hash,
        verdict: defaultVerdict(definition),
      });
      report.added.push(tool.name);
      continue;
    }
    if (pinned.definitionHash === hash) {
      report.unchanged.push(tool.name);
      continue;
    }
    const status: ToolStatus =
      pinned.reviewedHash === hash ? "reviewed" : pinned.reviewedHash === null ? "pending-review" : "quarantined";
    await changeToolDefinition(tx, pinned.id, { definition, hash, status });
    if (status === "quarantined") report.quarantined.push(tool.name);
  }
  await markServerSynced(tx, server.id);
  return report;
}
