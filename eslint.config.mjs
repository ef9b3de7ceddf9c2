import nextVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";
import prettier from "eslint-config-prettier";
import { fileURLToPath } from "node:url";
import { importsPointDown } from "./eslint/imports-point-down.mjs";

// Next.js's rules (React, hooks, accessibility, TypeScript), Prettier owns the layout, and the import rules that
// keep dependencies pointing one way: app -> components -> lib's features, floor by floor -> lib's ground.
const restrict = (patterns) => ["error", { patterns }];
const upward = (group, message) => ({ group, message });
const root = fileURLToPath(new URL(".", import.meta.url));

// lib's floors (docs/decisions/018-every-import-points-down.md). The ground: lib's root files and these folders
// (observing, the database's plumbing, the live views' push, the outbound guard and secrets, chat notices), which
// import only the ground. Above it each feature folder imports its own files, the ground and the folders on lower
// floors: never one on its own floor (sideways) or above. A new folder gets its floor here before it lints.
const LIB_GROUND = ["observe", "db", "live", "security", "chat-notices"];
const LIB_FLOORS = [
  ["audit", "mail"],
  ["auth", "tools"],
  ["policy-rules"],
  ["admin", "gateway", "oauth"],
  ["upstream"],
  ["conversations"],
  ["payments"],
  ["approvals"],
  ["calls", "instance"],
  ["agent-api"],
  ["openapi"],
];

// One data layer: every statement of a module is written once, in that module's sql.ts, and `transaction` from
// lib/db/ is the one way to run statements together.
const oneTransactionApi = {
  selector: "MemberExpression[property.name='$transaction']",
  message: "run statements together with transaction() from lib/db",
};
const statementsLiveInSqlTs = [
  oneTransactionApi,
  {
    selector: "MemberExpression[property.name=/^\\$(queryRaw|executeRaw)(Unsafe)?$/]",
    message: "a statement lives in its module's sql.ts: call a function from there",
  },
  {
    selector: "MemberExpression[object.name='Prisma'][property.name=/^(sql|raw|join)$/]",
    message: "SQL fragments live in the module's sql.ts",
  },
  {
    selector: "CallExpression[callee.object.type='MemberExpression'][callee.object.object.name=/^(db|tx|client)$/]",
    message: "a model query is a statement too: it lives in its module's sql.ts",
  },
];

const config = [
  {
    ignores: [
      ".next/**",
      "lib/generated/**",
      "node_modules/**",
      "reports/**",
      ".stryker-tmp/**",
      "test-results/**",
      "next-env.d.ts",
    ],
  },
  ...nextVitals,
  ...nextTypescript,
  prettier,
  {
    rules: {
      "import/no-cycle": ["error", { ignoreExternal: true }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["components/**"],
    rules: {
      "no-restricted-imports": restrict([
        upward(
          ["@/app", "@/app/*", "../app/*", "../../app/*"],
          "components never import from app/: move the code into lib/<feature>/",
        ),
      ]),
    },
  },
  {
    files: ["lib/**", "app/**", "components/**", "scripts/**"],
    plugins: { layers: { rules: { "imports-point-down": importsPointDown } } },
    rules: {
      "layers/imports-point-down": ["error", { root, ground: LIB_GROUND, floors: LIB_FLOORS, entrances: ["gateway"] }],
    },
  },
  {
    files: ["lib/**", "app/**", "components/**"],
    ignores: ["**/sql.ts", "lib/db/index.ts", "lib/db/migrate.ts"],
    rules: { "no-restricted-syntax": ["error", ...statementsLiveInSqlTs] },
  },
  {
    files: ["**/sql.ts"],
    rules: { "no-restricted-syntax": ["error", oneTransactionApi] },
  },
  {
    // Tests read answers as untyped JSON (schemas, model projections): `any` is how they walk it.
    files: ["tests/**", "e2e/**", "bench/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
];

export default config;
