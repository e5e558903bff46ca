/**
 * The dashboard's tus endpoint, /dashboard/uploads: the same upload
 * operations as /api/v1/uploads (src/uploads/service.ts), authenticated by
 * the signed-in session instead of an API key, so the browser never holds a
 * key. Same-origin only, and every write carries the session's CSRF token in
 * X-CSRF-Token (a tus client cannot send a form field). Errors are
 * problem+json like the API's.
 */
import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import { getUsage } from "../../db/accounts.ts";
import { AppError } from "../../http/errors.ts";
import { timingSafeEqualText } from "../../keys/api-key.ts";
import { appendToUpload, createUpload, describeUpload, optionsHeaders, terminateUpload, uploadHeaders, type TusRequest, type UploadCaller } from "../../uploads/service.ts";
import { TUS_VERSION } from "../../uploads/tus-headers.ts";
import type { DashboardEnv } from "../env.ts";
import { isSameOriginRequest } from "../security/csrf.ts";
import { loadSession } from "../security/session.ts";

export const DASHBOARD_UPLOADS_PATH = "/dashboard/uploads";
export const CSRF_HEADER = "X-CSRF-Token";

function signedOut(detail: string): AppError {
  return new AppError("unauthorized", detail);
}

/** Same origin, signed in, and (for writes) the session's CSRF token. */
const sessionGuard = createMiddleware<DashboardEnv>(async (c, next) => {
  if (c.req.method !== "OPTIONS") c.header("Tus-Resumable", TUS_VERSION);
  c.header("Cache-Control", "no-store");
  if (c.req.method === "OPTIONS") return next();
  if (!isSameOriginRequest(c)) throw signedOut("Uploads are accepted from the dashboard's own pages only.");
  const session = c.get("session");
  if (!session) throw signedOut("Sign in to the dashboard again.");
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    const sent = c.req.header(CSRF_HEADER) ?? "";
    if (!timingSafeEqualText(sent, session.csrfToken)) throw signedOut("The page has expired: reload it and upload again.");
  }
  await next();
});

/** The signed-in account and its plan (the upload size cap). */
async function callerOf(c: Context<DashboardEnv>): Promise<UploadCaller> {
  const session = c.get("session");
  const usage = session ? await getUsage(c.env.DB, session.accountId) : null;
  if (!session || !usage) throw signedOut("Sign in to the dashboard again.");
  return { accountId: session.accountId, plan: usage.plan };
}

function tusRequest(raw: Request): TusRequest {
  return { header: (name) => raw.headers.get(name) ?? undefined, body: raw.body };
}

export const dashboardUploads = new Hono<DashboardEnv>()
  .use("*", loadSession, sessionGuard)
  .options("*", (c) => c.body(null, 204, optionsHeaders(c.env)))
  .post("/", async (c) => {
    const upload = await createUpload(c.env, await callerOf(c), tusRequest(c.req.raw));
    return c.body(null, 201, { ...uploadHeaders(upload), Location: `${DASHBOARD_UPLOADS_PATH}/${upload.uploadId}` });
  })
  .get("/:upload_id", async (c) => {
    const upload = await describeUpload(c.env, await callerOf(c), c.req.param("upload_id"), tusRequest(c.req.raw), c.req.method === "HEAD");
    return c.json({ upload_id: upload.uploadId, offset: upload.offset, length: upload.length, status: upload.status }, 200, uploadHeaders(upload));
  })
  .patch("/:upload_id", async (c) => {
    const upload = await appendToUpload(c.env, await callerOf(c), c.req.param("upload_id"), tusRequest(c.req.raw));
    return c.body(null, 204, uploadHeaders(upload));
  })
  .delete("/:upload_id", async (c) => {
    await terminateUpload(c.env, await callerOf(c), c.req.param("upload_id"), tusRequest(c.req.raw));
    return c.body(null, 204, { "Tus-Resumable": TUS_VERSION });
  });
