import { db } from "../../db";
import { lineDiff, type DiffLine } from "../../line-diff";
import { claimWords } from "../calls/card";
import { schemaProblem } from "../calls/validate";
import type { PinnedDefinition, ToolStatus, Verdict } from "./definition";
import { defaultVerdict } from "./definition";
import { findServers, findTenantTools } from "../sql";

export interface ToolReview {
  id: string;
  server: string;
  name: string;
  status: ToolStatus;
  verdict: Verdict;
  /** The verdict the review form starts from: the current one once reviewed, else the default from the claims. */
  suggested: Verdict;
  definition: PinnedDefinition;
  definitionHash: string;
  claims: string[];
  /** For a quarantined tool: the reviewed definition against the one the server lists now, line by line. */
  change: DiffLine[] | null;
  /** Why calls cannot be checked against the input schema (so only deny can be saved); null when they can. */
  schemaProblem: string | null;
}

const pretty = (definition: PinnedDefinition) => JSON.stringify(definition, null, 2);

/** The admin page's servers and every tool's definition as it stands, in full, with a changed one's diff. */
export async function upstreamOverview(tenantId: string) {
  const [servers, tools] = await Promise.all([findServers(db, tenantId), findTenantTools(db, tenantId)]);
  const reviews: ToolReview[] = tools.map((tool) => {
    const problem = schemaProblem(tool.definitionHash, tool.definition.inputSchema);
    return {
      id: tool.id,
      server: tool.server.name,
      name: tool.name,
      status: tool.status,
      verdict: tool.verdict,
      suggested: problem ? "deny" : tool.status === "pending-review" ? defaultVerdict(tool.definition) : tool.verdict,
      definition: tool.definition,
      definitionHash: tool.definitionHash,
      claims: claimWords(tool.definition.annotations),
      change:
        tool.status === "quarantined" && tool.reviewedDefinition
          ? lineDiff(pretty(tool.reviewedDefinition), pretty(tool.definition))
          : null,
      schemaProblem: problem,
    };
  });
  return {
    servers: servers.map((server) => ({ ...server, syncedAt: server.syncedAt?.toISOString() ?? null })),
    tools: reviews,
  };
}
