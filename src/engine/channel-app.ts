/**
 * The engine channel's app of its own: the callback routes (routes.ts) under
 * CALLBACK_PREFIX, framed as the public app is (request id, problem+json),
 * and nothing else. The `ClipEngine` object answers its engine's calls to
 * the internal host with it, so a container can reach the callback routes
 * and never the public API, the dashboard or the operator API.
 */
import { Hono } from "hono";
import { CALLBACK_PREFIX } from "#contract";
import type { AppEnv } from "../http/app-env.ts";
import { framed } from "../http/app-frame.ts";
import { callbacks } from "./routes.ts";

export const engineChannelApp = framed(new Hono<AppEnv>()).route(CALLBACK_PREFIX, callbacks);
