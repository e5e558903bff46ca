/**
 * The dashboard's export downloads: a signed-in account's completed job as an
 * editor timeline, the same service as GET /api/v1/jobs/{job_id}/export, with
 * the session in place of an API key.
 */
import { Hono } from "hono";
import { AppError } from "../../http/errors.ts";
import { DomainError } from "../../domain/errors.ts";
import { EXPORT_FORMATS, type ExportFormat } from "../../jobs/export/index.ts";
import { exportOwnJob } from "../../jobs/export/read.ts";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";

function isExportFormat(value: string | undefined): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value ?? "");
}

export const jobExportPages = new Hono<DashboardEnv>().get("/:id/export", async (c) => {
  const format = c.req.query("format");
  if (!isExportFormat(format)) return c.text(`Unknown format: choose ${EXPORT_FORMATS.join(", ")}.`, 400);
  try {
    const cut = await exportOwnJob(c.env, sessionOf(c).accountId, c.req.param("id"), format, new URL(c.req.url).origin);
    return c.body(cut.body, 200, { "Content-Type": cut.contentType, "Content-Disposition": `attachment; filename="${cut.fileName}"` });
  } catch (error) {
    if (error instanceof DomainError && (error.code === "not_found" || error.code === "job_not_completed")) {
      return c.text(error.message, error.code === "not_found" ? 404 : 409);
    }
    throw error;
  }
});
