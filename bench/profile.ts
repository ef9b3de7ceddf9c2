import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

// Where a process's CPU went, from the V8 CPU profile `node --cpu-prof` writes: each sample's own function
// (self time), grouped by what it belongs to. Shares are of the time the process was busy, idle excluded.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const GROUPS: [label: string, matches: (frame: ProfileNode["callFrame"]) => boolean][] = [
  ["garbage collection", (frame) => frame.functionName === "(garbage collector)"],
  // Native write calls: the kernel's share of every round trip (PostgreSQL, the HTTP answer, the provider).
  [
    "socket writes (system calls)",
    (frame) => !frame.url && /^write(v|Buffer|Utf8String|Latin1String)$/.test(frame.functionName),
  ],
  ["Next.js (router, route adapter, runtime)", (frame) => frame.url.includes("node_modules/next/")],
  ["pg driver (pg, pg-pool, pg-protocol)", (frame) => /node_modules\/pg(-pool|-protocol)?\//.test(frame.url)],
  ["app bundle (toolgate's code, zod and other bundled libraries)", (frame) => frame.url.includes("/.next/server/")],
  [
    "Node.js (HTTP server, streams, web streams, async hooks, undici's Request)",
    (frame) => frame.url.startsWith("node:"),
  ],
];

export function profileShares(file: string): { label: string; share: number }[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, index) => {
    const frame = frames.get(id);
    const time = profile.timeDeltas[index] ?? 0;
    if (!frame || frame.functionName === "(idle)") return;
    busy += time;
    const label = GROUPS.find(([, matches]) => matches(frame))?.[0] ?? "other (native code, program)";
    totals.set(label, (totals.get(label) ?? 0) + time);
  });
  return [...totals].map(([label, time]) => ({ label, share: time / busy })).sort((a, b) => b.share - a.share);
}

/** The one profile `node --cpu-prof --cpu-prof-dir=DIR` left in DIR. */
export function profileIn(dir: string): string {
  const [file] = readdirSync(dir).filter((name) => name.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no CPU profile was written to ${dir}`);
  return path.join(dir, file);
}
