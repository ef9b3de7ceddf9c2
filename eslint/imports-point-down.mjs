import path from "node:path";

// lib/ is a house of floors (docs/decisions/018-every-import-points-down.md): the ground (lib's root files and the
// folders named as ground) imports only the ground; a feature folder imports itself, the ground and the folders
// on lower floors, never a folder on its own floor or above. A folder without a floor is refused until it has one.
// A feature named among the entrances (the gateway) is entered only through its index.ts, from lib/ and from above;
// and app/ and components/ never reach a statement: no sql.ts, no lib/db.

const roomOf = (libPath, ground) => {
  const [first, ...rest] = libPath.split("/");
  if (rest.length === 0 || ground.includes(first)) return { name: first, ground: true };
  return { name: first, ground: false };
};

function targetOf(source, filename, root) {
  if (source.startsWith("@/")) return source.slice(2);
  if (source.startsWith(".")) return path.relative(root, path.resolve(path.dirname(filename), source));
  return null;
}

export const importsPointDown = {
  meta: {
    type: "problem",
    docs: { description: "every import in lib/ points down a floor (or stays in its own folder)" },
    schema: [
      {
        type: "object",
        properties: {
          root: { type: "string" },
          ground: { type: "array", items: { type: "string" } },
          floors: { type: "array", items: { type: "array", items: { type: "string" } } },
          entrances: { type: "array", items: { type: "string" } },
        },
        required: ["root", "ground", "floors"],
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { root, ground, floors, entrances = [] } = context.options[0];
    const own = path.relative(root, context.filename).split(path.sep).join("/");
    if (own.startsWith("lib/generated/")) return {};
    const above = /^(app|components|scripts)\//.test(own);
    if (!own.startsWith("lib/") && !above) return {};
    const report = (node, message) => context.report({ node: node.source, message });

    // The door and the floor below app/: checks of an import from anywhere, then of an import inside lib/.
    function enters(node, target, fromFeature) {
      const [feature, ...inside] = target.slice(4).split("/");
      if (!entrances.includes(feature) || feature === fromFeature || inside.length === 0) return false;
      if (inside.join("/").replace(/\.(ts|tsx)$/, "") === "index") return false;
      report(node, `lib/${feature}/ is entered through its index.ts only: import from "@/lib/${feature}" (${target})`);
      return true;
    }
    function reachesStatements(node, target) {
      if (!/^(app|components)\//.test(own)) return false;
      if (!/^lib\/db(\/|\.ts|$)/.test(target) && !/(^|\/)sql(\.ts)?$/.test(target)) return false;
      report(node, `${own.split("/")[0]}/ runs no statement: call a function of the feature in lib/, not ${target}`);
      return true;
    }

    const floorOf = new Map(floors.flatMap((rooms, index) => rooms.map((room) => [room, index + 1])));
    const from = above ? null : roomOf(own.slice(4), ground);
    const fromFloor = from && floorOf.get(from.name);

    function check(node) {
      const source = node.source?.value;
      if (typeof source !== "string") return;
      const target = targetOf(source, context.filename, root)?.split(path.sep).join("/");
      if (target === null || target === undefined) return;
      if (above) {
        if (target.startsWith("lib/") && !reachesStatements(node, target)) enters(node, target, null);
        return;
      }
      if (!target.startsWith("lib/"))
        return context.report({
          node: node.source,
          message: `lib/ is what production runs: it imports no page, component, script or test (${source})`,
        });
      if (target.startsWith("lib/generated/")) return;
      const to = roomOf(target.slice(4), ground);
      if (to.ground || to.name === from.name) return;
      const reportUp = (message) => report(node, message);
      if (from.ground)
        return reportUp(
          `lib's ground (root files, ${ground.join(", ")}) imports no feature: move what ${own} needs from lib/${to.name}/ down to the root, or hand it in`,
        );
      const toFloor = floorOf.get(to.name);
      if (fromFloor === undefined)
        return reportUp(`lib/${from.name}/ has no floor: give it one in eslint.config.mjs (LIB_FLOORS)`);
      if (toFloor === undefined)
        return reportUp(`lib/${to.name}/ has no floor: give it one in eslint.config.mjs (LIB_FLOORS)`);
      if (toFloor >= fromFloor)
        return reportUp(
          `lib/${from.name}/ (floor ${fromFloor}) may not import lib/${to.name}/ (floor ${toFloor}): imports point down; move the shared part below both, or hand lib/${from.name}/ a function (a port)`,
        );
      enters(node, target, from.name);
    }

    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};
