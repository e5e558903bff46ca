import { Hono } from "hono";
import { admin } from "./admin/routes";
import { configs } from "./api/configs";
import { errorDocs } from "./api/error-docs";
import { health } from "./api/health";
import { jobs } from "./api/jobs";
import { transcript } from "./api/transcript";
import { cdn } from "./cdn/routes";
import { callbacks } from "./engine/callbacks";
import { dashboard } from "./dashboard";
import { openapi } from "./api/openapi";
import { usage } from "./api/usage";
import { videoTypes } from "./api/video-types";
import { apiGuard } from "./http/api-guard";
import type { AppEnv } from "./http/app-env";
import { handleError, handleNotFound } from "./http/problem";
import { requestId } from "./http/request-id";

export const app = new Hono<AppEnv>();

app.use("*", requestId);
app.onError(handleError);
app.notFound(handleNotFound);

// Unauthenticated.
app.route("/health", health);
app.route("/docs/errors", errorDocs);
app.route("/api/v1/openapi.json", openapi);

// Public API: every route below needs a key (auth -> rate limit -> JSON body guard).
app.use("/api/v1/*", apiGuard);
app.route("/api/v1/configs", configs);
app.route("/api/v1/usage", usage);
app.route("/api/v1/video-types", videoTypes);
app.route("/api/v1/jobs", jobs);
app.route("/api/v1/jobs", transcript);

// Web dashboard (session cookie), and the bare origin leads there.
app.get("/", (c) => c.redirect("/dashboard", 302));
app.route("/dashboard", dashboard);

// Operator API (ADMIN_TOKEN).
app.route("/admin/v1", admin);

// Engine channel and local CDN (their own authentication / none).
app.route("/internal/v1/jobs", callbacks);
app.route("/cdn", cdn);
