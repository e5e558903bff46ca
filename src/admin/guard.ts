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
 * Only the ADMIN_TOKEN secret opens the operator API; API keys never do. Both
 * sides are hashed first so the constant-time compare sees equal lengths.
 */
export const adminGuard = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.env.ADMIN_TOKEN;
  const presented = bearerToken(c.req.header("Authorization"));
  // An unset or trivially short secret disables the operator API rather than opening it.
  if (!expected || expected.length < 16 || !presented) throw adminUnauthorized();
  const [presentedHash, expectedHash] = await Promise.all([sha256Hex(presented), sha256Hex(expected)]);
  if (!timingSafeEqualText(presentedHash, expectedHash)) throw adminUnauthorized();
  await next();
});
