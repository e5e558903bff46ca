/**
 * GET /internal/v1/jobs/:job_id/source on the engine channel: the engine
 * reads an upload job's source here (an upload has no public URL). Mounted
 * inside the channel's sub-app, so its token check applies first; the job
 * must be processing, as its account's Durable Object holds it (no D1 read,
 * src/engine/live-job.ts). Single byte ranges are honoured, so an
 * interrupted read can resume.
 */
import { Hono } from "hono";
import { parseRange } from "../cdn/range.ts";
import { liveProcessingJob } from "./live-job.ts";
import type { AppEnv } from "../http/app-env.ts";
import { AppError } from "../http/errors.ts";
import { uploadKey } from "../uploads/ids.ts";

interface ChannelEnv {
  Bindings: Env;
  Variables: AppEnv["Variables"];
}

/** RFC 6266 filename* for any Unicode name. */
function contentDisposition(fileName: string): string {
  return `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

export const uploadSource = new Hono<ChannelEnv>().get("/:job_id/source", async (c) => {
  const job = await liveProcessingJob(c.env, c.req.param("job_id"), null);
  if (job.uploadId === null) throw new AppError("not_found", `Job ${job.id} has no uploaded source; fetch its video_url.`);
  const key = uploadKey(job.uploadId);
  const meta = await c.env.UPLOADS.head(key);
  if (!meta) throw new AppError("not_found", `The uploaded source of job ${job.id} no longer exists.`);
  const range = parseRange(c.req.header("Range"), meta.size);
  if (range.kind === "unsatisfiable") {
    throw new AppError("range_not_satisfiable", `The source has ${meta.size} bytes.`, { headers: { "Content-Range": `bytes */${meta.size}` } });
  }
  const object = await c.env.UPLOADS.get(key, range.kind === "range" ? { range: { offset: range.offset, length: range.length } } : {});
  if (!object) throw new AppError("not_found", `The uploaded source of job ${job.id} no longer exists.`);
  const name = decodeURIComponent(new URL(job.videoUrl).pathname.slice(1));
  const headers: Record<string, string> = {
    "Content-Type": "application/octet-stream",
    "Accept-Ranges": "bytes",
    "Content-Disposition": contentDisposition(name),
    "Cache-Control": "no-store",
    ETag: object.httpEtag,
  };
  if (range.kind === "range") {
    headers["Content-Range"] = `bytes ${range.offset}-${range.offset + range.length - 1}/${meta.size}`;
    headers["Content-Length"] = String(range.length);
    return c.body(object.body, 206, headers);
  }
  headers["Content-Length"] = String(meta.size);
  return c.body(object.body, 200, headers);
});
