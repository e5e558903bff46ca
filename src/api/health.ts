import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";

/** Liveness only: no D1, no Durable Object, so it stays cheap under load. */
export const health = new Hono<AppEnv>().get("/", (c) => {
  c.header("Cache-Control", "no-store");
  return c.json({ ok: true, service: "clipjobs" });
});
