import { inject } from "vitest";

// Runs in every test worker before any module that reads DATABASE_URL.
process.env.DATABASE_URL = inject("databaseUrl");
