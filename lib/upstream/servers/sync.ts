import { db } from "../../db";
import { env } from "../../env";
import { newId } from "../../ids";
import { dropUpstreamClient, upstreamClient } from "./client";
import { defaultVerdict, isToolName, pinDefinition, type ListedTool, type ToolStatus } from "./definition";
import { changeToolDefinition, findServerTools, insertTool, markServerSynced, type ServerRow } from "../sql";

export interface SyncReport {
  added: string[];
  quarantined: string[];
  unchanged: string[];
}

const MAX_PAGES = 20;

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

/**
 * Pins what the server lists against what was reviewed: a new tool waits for review; a reviewed tool whose
 * definition changed is quarantined (the reviewed definition kept for the diff) until an admin reviews the change;
 * one that changed back to what was reviewed is reviewed again. Nothing the server says exposes a tool by itself.
 */
export async function syncServer(server: ServerRow): Promise<SyncReport> {
  const listed = await listTools(server).catch((error: unknown) => {
    dropUpstreamClient(server);
    throw error;
  });
  const known = new Map((await findServerTools(db, server.id)).map((tool) => [tool.name, tool]));
  const report: SyncReport = { added: [], quarantined: [], unchanged: [] };
  for (const tool of listed.filter((candidate) => isToolName(candidate.name))) {
    const { definition, hash } = pinDefinition(tool);
    const pinned = known.get(tool.name);
    if (!pinned) {
      await insertTool(db, {
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
    await changeToolDefinition(db, pinned.id, { definition, hash, status });
    if (status === "quarantined") report.quarantined.push(tool.name);
  }
  await markServerSynced(db, server.id);
  return report;
}
