/**
 * The operator API's door (/admin/v1). In order: the per-address limit (the
 * pre-authentication gate's limit, in a window of its own: src/gate/), the
 * deployment's own ADMIN_TOKEN (too short, and the API stays closed), then the
 * token presented.
 *
 * A Worker has no start-up step that could refuse to deploy, so "refused at
 * start" means: with ADMIN_TOKEN unset or shorter than MIN_ADMIN_TOKEN_LENGTH,
 * every operator request answers 503 service_misconfigured (configuration_error
 * ADMIN_TOKEN) whatever it presents, and each isolate logs the reason once.
 */
import { createMiddleware } from "hono/factory";
import { ADMIN_ADDRESS_POLICY, admitClientAddress } from "../http/pre-auth-limit.ts";
import type { AppEnv } from "../http/app-env.ts";
import { AppError } from "../http/errors.ts";
import { bearerToken } from "../http/auth.ts";
import { sha256Hex, timingSafeEqualText } from "../keys/api-key.ts";

/** The shortest ADMIN_TOKEN the operator API opens for (e.g. openssl rand -base64 32 gives 44). */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

function adminUnauthorized(): AppError {
  return new AppError("unauthorized", "The operator API needs Authorization: Bearer <ADMIN_TOKEN>.", {
    headers: { "WWW-Authenticate": 'Bearer realm="clipjobs-admin"' },
  });
}

/** Why the deployment's ADMIN_TOKEN opens nothing, or null when it is long enough. */
export function adminTokenProblem(env: Env): string | null {
  if (!env.ADMIN_TOKEN) return "ADMIN_TOKEN is not set";
  if (env.ADMIN_TOKEN.length < MIN_ADMIN_TOKEN_LENGTH) {
    return `ADMIN_TOKEN is ${env.ADMIN_TOKEN.length} characters long; the operator API needs at least ${MIN_ADMIN_TOKEN_LENGTH} (e.g. openssl rand -base64 32)`;
  }
  return null;
}

/** Whether this isolate has logged the token's problem already (once is enough: every request would repeat it). */
let reported = false;

function closed(problem: string): AppError {
  if (!reported) {
    reported = true;
    console.error(`operator API closed: ${problem}`);
  }
  return new AppError("service_misconfigured", `The operator API is closed until the deployment's ADMIN_TOKEN is at least ${MIN_ADMIN_TOKEN_LENGTH} characters long.`, {
    headers: { "Retry-After": "300" },
    extra: { configuration_error: "ADMIN_TOKEN" },
  });
}

/**
 * Whether `presented` is this deployment's ADMIN_TOKEN. Both sides are hashed
 * first so the constant-time compare sees equal lengths; an unset or short
 * secret opens nothing.
 */
export async function isAdminToken(env: Env, presented: string | null | undefined): Promise<boolean> {
  if (adminTokenProblem(env) !== null || !presented) return false;
  const [presentedHash, expectedHash] = await Promise.all([sha256Hex(presented), sha256Hex(env.ADMIN_TOKEN)]);
  return timingSafeEqualText(presentedHash, expectedHash);
}

/** Only the ADMIN_TOKEN secret opens the operator API; API keys never do. */
export const adminGuard = createMiddleware<AppEnv>(async (c, next) => {
  await admitClientAddress(c, ADMIN_ADDRESS_POLICY);
  const problem = adminTokenProblem(c.env);
  if (problem !== null) throw closed(problem);
  if (!(await isAdminToken(c.env, bearerToken(c.req.header("Authorization"))))) throw adminUnauthorized();
  await next();
});
