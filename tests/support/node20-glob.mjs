// Node 20 has no fs.globSync (Node 22 added it); the MCP conformance suite's 0.2 alphas import it, for their
// results summary only. Started with `node --import ./tests/support/node20-glob.mjs`, this hands modules under
// node_modules an `fs` that adds a globSync for the one pattern shape they use (`**/<file name>`).
import { register } from "node:module";

const shim = `
import fs from "node:fs";
import path from "node:path";
export * from "node:fs";
export default fs;
export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const name = pattern.replace(/^\\*\\*\\//, "");
  if (name.includes("*")) throw new Error("this globSync shim matches only **/<file name>, not " + pattern);
  return fs
    .readdirSync(cwd, { recursive: true })
    .map(String)
    .filter((file) => path.basename(file) === name);
}
`;

const hooks = `
export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes("/node_modules/") &&
      !context.parentURL.startsWith("data:")) {
    return { url: "data:text/javascript," + encodeURIComponent(${JSON.stringify(shim)}), shortCircuit: true };
  }
  return next(specifier, context);
}
`;

if (!("globSync" in (await import("node:fs")))) register(`data:text/javascript,${encodeURIComponent(hooks)}`);
