import { admin } from "./admin/routes.ts";
import { configs } from "./api/configs.ts";
import { errorDocs } from "./api/error-docs.ts";
import { exportCut } from "./api/export.ts";
import { clips } from "./api/clips.ts";
import { health } from "./api/health.ts";
import { jobs } from "./api/jobs.ts";
import { logo } from "./api/logo.ts";
import { cookies } from "./api/cookies.ts";
import { OPENAPI_PATH, openApiDocumentApp } from "./api/openapi.ts";
import { CDN_MOUNT, localCdnOnly } from "./cdn/local-only.ts";
import { transcript } from "./api/transcript.ts";
import { cdn } from "./cdn/routes.ts";
import { callbacks } from "./engine/routes.ts";
import { CALLBACK_PREFIX } from "#contract";
import { dashboard } from "./dashboard/routes.tsx";
import { DASHBOARD_UPLOADS_PATH, dashboardUploads } from "./dashboard/pages/uploads.ts";
import { uploads } from "./api/uploads.ts";
import { usage } from "./api/usage.ts";
import { videoTypes } from "./api/video-types.ts";
import { webhooks } from "./api/webhooks.ts";
import { apiApp } from "./http/api-app.ts";
import { apiGuard } from "./http/api-guard.ts";
import { MCP_PATH, mcp } from "./mcp/routes.ts";
import { framed } from "./http/app-frame.ts";

/**
 * The root is an OpenAPIHono: every apiApp() sub-app mounted with app.route()
 * lands in the served OpenAPI document (see src/api/openapi.ts).
 */
export const app = framed(apiApp());

// Unauthenticated.
app.route("/health", health);
app.route("/docs/errors", errorDocs);
app.route(OPENAPI_PATH, openApiDocumentApp(app));

// Public API: every route below needs a key (auth -> rate limit -> JSON body guard).
app.use("/api/v1/*", apiGuard);
app.route("/api/v1/configs", configs);
app.route("/api/v1/usage", usage);
app.route("/api/v1/video-types", videoTypes);
app.route("/api/v1/jobs", jobs);
app.route("/api/v1/webhooks", webhooks);
app.route("/api/v1/uploads", uploads);
app.route("/api/v1/jobs", transcript);
app.route("/api/v1/jobs", exportCut);
app.route("/api/v1/jobs", clips);
app.route("/api/v1/logo", logo);
app.route("/api/v1/cookies", cookies);

// The remote MCP server: the same keys and request window, tools over the same services (src/mcp/).
app.route(MCP_PATH, mcp);

// Web dashboard (session cookie), and the bare origin leads there.
app.get("/", (c) => c.redirect("/dashboard", 302));
// Before the dashboard: its tus endpoint takes upload bodies, not 16 KiB forms.
app.route(DASHBOARD_UPLOADS_PATH, dashboardUploads);
app.route("/dashboard", dashboard);

// Operator API (ADMIN_TOKEN).
app.route("/admin/v1", admin);

// Engine channel (its own authentication), and the local CDN where CDN_URL is this Worker.
app.route(CALLBACK_PREFIX, callbacks);
app.use(`${CDN_MOUNT}/*`, localCdnOnly);
app.route(CDN_MOUNT, cdn);
