import { readFileSync, statSync } from "node:fs";
import { z } from "zod";
import { env } from "../../env";
import { SERVER_NAME } from "./definition";

// Local (stdio) servers run a command on this host, so only the operator defines them, in UPSTREAM_SERVERS_FILE;
// nothing a browser sends can name a command.

const LocalServerSchema = z.strictObject({
  tenant: z.string().min(1).max(100),
  name: z.string().regex(SERVER_NAME, "a server's name is lowercase letters, digits and hyphens, at most 30"),
  command: z.string().min(1).max(1000),
  args: z.array(z.string().max(4000)).max(100).default([]),
  env: z.record(z.string().max(200), z.string().max(4000)).default({}),
  cwd: z.string().min(1).max(1000).optional(),
});
export type LocalServer = z.infer<typeof LocalServerSchema>;

const FileSchema = z.strictObject({ servers: z.array(LocalServerSchema).max(100) });

let cached: { path: string; changedAt: number; servers: LocalServer[] } | null = null;

/**
 * The operator's local servers; none without UPSTREAM_SERVERS_FILE. Read again when the file changes (the sync job
 * picks up an edit). A bad file throws, naming what is wrong.
 */
export function localServers(): LocalServer[] {
  const path = env().UPSTREAM_SERVERS_FILE;
  if (!path) return [];
  const changedAt = statSync(path).mtimeMs;
  if (cached?.path === path && cached.changedAt === changedAt) return cached.servers;
  const parsed = FileSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success)
    throw new Error(
      `UPSTREAM_SERVERS_FILE (${path}) is not a list of servers: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
    );
  cached = { path, changedAt, servers: parsed.data.servers };
  return cached.servers;
}

export const localServer = (tenantId: string, name: string) =>
  localServers().find((server) => server.tenant === tenantId && server.name === name);
