import { applyD1Migrations, env } from "cloudflare:test";
import { installPoolPrototypeFix } from "./pool-prototype-fix.ts";

// Keeps Durable Object calls as cheap at the thousandth object as at the first (see the file).
installPoolPrototypeFix();

// Every test file starts from the migrated schema (applyD1Migrations skips
// migrations that are already applied).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
