import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { POST as proposeRoute } from "../app/api/v1/conversations/[id]/tool-calls/route";
import { closeUpstreams } from "../lib/upstream/servers/client";
import { registerLocalServers, reviewTool } from "../lib/upstream/servers/servers";
import { findServerTools } from "../lib/upstream/sql";
import { syncServer } from "../lib/upstream/servers/sync";
import { db } from "../lib/db";
import { anaConversation, createWorld, NO_CEILINGS } from "../tests/support/world";
import { benchDatabase, fail, ms, rounds, summarize, writeSection } from "./common";

// `npm run bench` (upstream): a read-only upstream call through toolgate against the same call made straight to the
// upstream, alternated in one run. Both go to server-filesystem from npm over stdio, each to its own process, reading
// the same small file; the proxied one goes through the real route (key lookup, rate, the pinned schema, the record
// before sending, the send, the answer's record).

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? rounds(300, 5));
const WARMUP = rounds(30, 2);
const SERVER = path.resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

const database = await benchDatabase().catch((error: Error) => fail(error.message));
const world = await createWorld({ rateConversationPerMin: 1_000_000, rateKeyPerMin: 1_000_000, ...NO_CEILINGS });
const folder = realpathSync(mkdtempSync(path.join(tmpdir(), "toolgate-bench-files-")));
const file = path.join(folder, "notes.txt");
writeFileSync(file, "a small file read again and again\n".repeat(20));
const config = path.join(folder, "upstream.json");
writeFileSync(
  config,
  JSON.stringify({
    servers: [{ tenant: world.tenantId, name: "files", command: process.execPath, args: [SERVER, folder] }],
  }),
);
process.env.UPSTREAM_SERVERS_FILE = config;
const [server] = await registerLocalServers();
await syncServer(server);
const read = (await findServerTools(db, server.id)).find((tool) => tool.name === "read_text_file");
if (!read) fail("server-filesystem lists no read_text_file");
const reviewed = await reviewTool(
  { userId: world.users.admin, tenantId: world.tenantId, role: "ADMIN" },
  { tool_id: read.id, definition_hash: read.definitionHash, verdict: "allow" },
);
if (!reviewed.ok) fail(reviewed.message);
const conversationId = await anaConversation(world, ["files__read_text_file"], []);

const direct = new Client({ name: "bench-direct", version: "1.0.0" });
await direct.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER, folder], stderr: "ignore" }));

async function straight(): Promise<void> {
  const answer = await direct.callTool({ name: "read_text_file", arguments: { path: file } });
  if (answer.isError) throw new Error("the direct read failed");
}

async function proxied(): Promise<void> {
  const request = new Request(`http://toolgate.bench/api/v1/conversations/${conversationId}/tool-calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${world.keys.agent}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "files__read_text_file", arguments: { path: file } }),
  });
  const response = await proposeRoute(request, { params: Promise.resolve({ id: conversationId }) });
  const body = (await response.json()) as { code: string };
  if (body.code !== "upstream.called") throw new Error(`the proxied read answered ${body.code}`);
}

for (let i = 0; i < WARMUP; i++) {
  await straight();
  await proxied();
}
const samples = { straight: [] as number[], proxied: [] as number[] };
let statements = 0;
for (let i = 0; i < ROUNDS; i++) {
  let started = performance.now();
  await straight();
  samples.straight.push(performance.now() - started);
  started = performance.now();
  if (i === 0) statements = await database.statementsOf(proxied);
  else await proxied();
  samples.proxied.push(performance.now() - started);
}
await direct.close();
await closeUpstreams();
const [a, b] = [summarize(samples.straight), summarize(samples.proxied)];
const table = [
  "| call | median | p99 | calls |",
  "|---|---|---|---|",
  `| read_text_file straight to server-filesystem (stdio) | ${ms(a.median)} | ${ms(a.p99)} | ${a.n} |`,
  `| files__read_text_file through toolgate's route | ${ms(b.median)} | ${ms(b.p99)} | ${b.n} |`,
  `| ratio (through toolgate / straight), medians | ${(b.median / a.median).toFixed(2)}x | ${(b.p99 / a.p99).toFixed(2)}x (p99) | |`,
].join("\n");
console.log(table);
console.log(`statements per proxied read: ${statements}`);
await writeSection(
  "upstream",
  `### An upstream read through toolgate (\`bench/upstream.ts\`)

date ${new Date().toISOString()}; ${cpus().length} cores; Node ${process.version}; load average ${loadavg()[0].toFixed(1)} at the end.
The same read-only call (server-filesystem's \`read_text_file\` on a 700-byte file, over stdio) made straight with
the MCP SDK client and through toolgate's route, alternated, ${ROUNDS} rounds after ${WARMUP} warm-up pairs. The proxied
read sends ${statements} SQL statements: the key lookup with the rate count, the reviewed tool, the record before
sending (the call and its upstream row, one transaction) and the answer's record (one transaction).

${table}`,
);
await database.stop();
