import { defineConfig } from "prisma/config";

// Only `prisma generate` runs here; migrations are applied by scripts/migrate.ts (docs/decisions/001).
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
