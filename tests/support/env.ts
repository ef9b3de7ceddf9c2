import { inject } from "vitest";

// Runs in every test worker before any module that reads DATABASE_URL.
process.env.DATABASE_URL = inject("databaseUrl");
Object.assign(process.env, inject("externals"), {
  PAYMENT_PROVIDER_TIMEOUT_MS: "1000",
  TOOLGATE_JOBS: "off",
  SECRETS_KEY: "dGVzdHMtb25seS1zZWNyZXRzLWtleS0zMi1ieXRlcyE=",
  AUDIT_SEAL_KEY: "dGVzdHMtb25seS1hdWRpdC1zZWFsLWtleS0zMi1ieSE=",
});
