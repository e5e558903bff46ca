import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env";
import { AppError } from "../http/errors";
import { bearerToken } from "../http/auth";
import { sha256Hex, timingSafeEqualText } from "../keys/api-key";

function adminUnauthorized(): AppError {
  return new AppError("unauthorized", "The operator API needs Authorization: Bearer <ADMIN_TOKEN>.", {
    headers: { "WWW-Authenticate": 'Bearer realm="clipjobs-admin"' },
  });
}

/**
 * Whether `presented` is this deployment's ADMIN_TOKEN. Both sides are hashed
 * first so the constant-time compare sees equal lengths; an unset or
 * trivially short secret opens nothing.
 */
export async function isAdminToken(env: Env, presented: string | null | undefined): Promise<boolean> {
  const expected = env.ADMIN_TOKEN;
  if (!expected || expected.length < 16 || !presented) return false;
  const [presentedHash, expectedHash] = await Promise.all([sha256Hex(presented), sha256Hex(expected)]);
  return timingSafeEqualText(presentedHash, expectedHash);
}

/** Only the ADMIN_TOKEN secret opens the operator API; API keys never do. */
export const adminGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (!(await isAdminToken(c.env, bearerToken(c.req.header("Authorization"))))) throw adminUnauthorized();
  await next();
});
