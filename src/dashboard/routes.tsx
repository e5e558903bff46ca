/**
 * The web dashboard under /dashboard: server-rendered pages on the same D1
 * data as the API. Every route passes the security headers, the request
 * limits per client address and per session, a body limit,
 * the Origin check on POST and the session lookup; the pages behind sign-in
 * add requireSession and the session's CSRF token check.
 */
import { Hono } from "hono";
import { Layout } from "./components/layout.tsx";
import type { DashboardEnv } from "./env.ts";
import { authPages } from "./pages/auth.tsx";
import { configPages } from "./pages/configs.tsx";
import { fleetPages } from "./pages/fleet.tsx";
import { jobPages } from "./pages/jobs.tsx";
import { keysPages } from "./pages/keys.tsx";
import { LOGO_FORM_BYTES, LOGO_PAGE_PATH, logoPages } from "./pages/logo.tsx";
import { usagePages } from "./pages/usage.tsx";
import { webhookPages } from "./pages/webhooks.tsx";
import { originCheck, sessionCsrf } from "./security/csrf.ts";
import { formLimit } from "./security/form-limit.ts";
import { dashboardHeaders } from "./security/headers.ts";
import { dashboardRequestLimit } from "./security/request-limit.ts";
import { loadSession, requireSession } from "./security/session.ts";

/** Forms are small; nothing the dashboard accepts comes near this. */
export const MAX_FORM_BYTES = 16 * 1024;

const anyFormLimit = formLimit(MAX_FORM_BYTES);
// The logo form carries an image of up to 1 MiB (checked again, exactly, by its route).
const logoFormLimit = formLimit(LOGO_FORM_BYTES, "logo_too_large", "The image is larger than 1 MiB.");

function signedIn(pages: Hono<DashboardEnv>): Hono<DashboardEnv> {
  return new Hono<DashboardEnv>().use("*", requireSession, sessionCsrf).route("/", pages);
}

export const dashboard = new Hono<DashboardEnv>()
  .use(
    "*",
    dashboardHeaders,
    // Before anything that costs a D1 read (the session lookup) or a body read.
    dashboardRequestLimit,
    (c, next) => (c.req.path === LOGO_PAGE_PATH ? logoFormLimit(c, next) : anyFormLimit(c, next)),
    originCheck,
    loadSession,
  )
  .get("/", (c) => c.redirect(c.get("session") ? "/dashboard/jobs" : "/dashboard/login", 303))
  .route("/", authPages)
  .route("/jobs", signedIn(jobPages))
  .route("/configs", signedIn(configPages))
  .route("/logo", signedIn(logoPages))
  .route("/keys", signedIn(keysPages))
  .route("/usage", signedIn(usagePages))
  .route("/webhooks", signedIn(webhookPages))
  // Operators: opened by the ADMIN_TOKEN, not by an account session.
  .route("/fleet", fleetPages)
  .all("*", (c) =>
    c.html(
      <Layout title="Page not found" nonce={c.get("nonce")} session={c.get("session")}>
        <p>
          There is no page here. <a href="/dashboard">Go to the dashboard</a>.
        </p>
      </Layout>,
      404,
    ),
  );

dashboard.onError((err, c) => {
  console.error(`[${c.get("requestId")}] dashboard error`, err);
  return c.html(
    <Layout title="Something went wrong" nonce={c.get("nonce") ?? ""} session={null}>
      <p>
        The page could not be shown. Try again in a moment. If it keeps happening, quote request id{" "}
        <code>{c.get("requestId")}</code>.
      </p>
    </Layout>,
    500,
  );
});
