import { applyD1Migrations, env } from "cloudflare:test";

// Every test file starts from the migrated schema (applyD1Migrations skips
// migrations that are already applied).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
