import nextVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";
import prettier from "eslint-config-prettier";

// Next.js's rules (React, hooks, accessibility, TypeScript), Prettier owns the layout, and the import rules that
// keep dependencies pointing one way: app -> components -> feature modules -> gateway -> tools -> db.
const restrict = (patterns) => ["error", { patterns }];
const upward = (group, message) => ({ group, message });

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
        upward(["@/app/*"], "components never import from app/: move the code into lib/<feature>/"),
      ]),
    },
  },
  {
    files: ["lib/**"],
    rules: {
      "no-restricted-imports": restrict([
        upward(["@/app/*", "@/components/*", "../app/*", "../components/*"], "lib/ never imports pages or components"),
        upward(
          ["@/scripts/*", "../scripts/*", "../../scripts/*"],
          "lib/ is what production runs: development scaffolding lives in scripts/",
        ),
      ]),
    },
  },
  {
    files: ["lib/gateway/**", "lib/tools/**"],
    rules: {
      "no-restricted-imports": restrict([
        upward(["@/app/*", "@/components/*"], "the gateway never imports pages or components"),
        upward(
          [
            "@/lib/approvals/*",
            "@/lib/agent-api/*",
            "@/lib/conversations/*",
            "@/lib/admin/*",
            "@/lib/mail/*",
            "@/lib/live/*",
            "../approvals/*",
            "../agent-api/*",
            "../conversations/*",
            "../admin/*",
            "../mail/*",
            "../live/*",
          ],
          "the gateway and the tools know no feature module: hand it a function (a port) instead",
        ),
      ]),
    },
  },
  {
    // Tests read answers as untyped JSON (schemas, model projections): `any` is how they walk it.
    files: ["tests/**", "e2e/**", "bench/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
];

export default config;
