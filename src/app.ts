import { admin } from "./admin/routes";
import { configs } from "./api/configs";
import { errorDocs } from "./api/error-docs";
import { exportCut } from "./api/export";
import { health } from "./api/health";
import { jobs } from "./api/jobs";
import { logo } from "./api/logo";
import { cookies } from "./api/cookies";
import { OPENAPI_PATH, openApiDocumentApp } from "./api/openapi";
import { CDN_MOUNT, localCdnOnly } from "./cdn/local-only";
import { transcript } from "./api/transcript";
import { cdn } from "./cdn/routes";
import { callbacks } from "./engine/routes";
import { CALLBACK_PREFIX } from "#contract";
import { dashboard } from "./dashboard/routes";
import { DASHBOARD_UPLOADS_PATH, dashboardUploads } from "./dashboard/pages/uploads";
import { uploads } from "./api/uploads";
import { usage } from "./api/usage";
import { videoTypes } from "./api/video-types";
import { webhooks } from "./api/webhooks";
import { apiApp } from "./http/api-app";
import { apiGuard } from "./http/api-guard";
import { MCP_PATH, mcp } from "./mcp/routes";
import { framed } from "./http/app-frame";

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
