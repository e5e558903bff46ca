/**
 * The brand and language routes of the engine channel (#contract, direction
 * 2), mounted inside `callbacks` so its token middleware runs
 * first; the job comes from its account's Durable Object (live-job.ts):
 *
 *   POST /:job_id/translate   TranslateRequest -> TranslateResult (Workers AI, translate.ts)
 *   GET  /:job_id/logo        the account's logo, when the job's configuration places one
 *   GET  /:job_id/cookies     the account's cookies file for the platform of the job's video
 *
 * The logo is read from the private bucket and never published; a job whose
 * configuration places no logo gets 404, as does an account without one.
 */
import { Hono, type Context } from "hono";
import { TranslateRequest, TRANSLATE_MAX_BODY_BYTES } from "#contract";
import { mediaType, readBodyCapped } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { readLogo } from "../logos/service.ts";
import { cookiesForJob } from "../cookies/service.ts";
import { jobOf, liveJob, noteSignOfLife, type ChannelEnv } from "./channel-job.ts";
import { translateTexts, TranslationFailed, TranslationUnavailable } from "./translate.ts";
import { checkTranslationScope } from "../ai/allowance.ts";
import { jobAiRunner } from "../ai/usage.ts";

async function translateBody(c: Context<ChannelEnv>): Promise<TranslateRequest> {
  if (mediaType(c.req.header("Content-Type")) !== "application/json") {
    throw new AppError("unsupported_media_type", "Content-Type must be application/json.");
  }
  const text = new TextDecoder().decode(await readBodyCapped(c.req.raw, TRANSLATE_MAX_BODY_BYTES));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError("invalid_request", "The body is not valid JSON.");
  }
  const parsed = TranslateRequest.safeParse(json);
  if (!parsed.success) {
    throw new AppError("invalid_request", "The body does not match the contract's TranslateRequest.", {
      errors: parsed.error.issues.slice(0, 20).map((issue) => ({ path: issue.path.join(".") || "(body)", message: issue.message })),
    });
  }
  return parsed.data;
}

export const brandChannel = new Hono<ChannelEnv>()
  .post("/:job_id/translate", liveJob, async (c) => {
    const job = jobOf(c);
    const request = await translateBody(c);
    checkTranslationScope(job, request.target_language);
    await noteSignOfLife(c.env, job);
    try {
      return c.json(await translateTexts(jobAiRunner(c.env, job.id), request));
    } catch (err) {
      if (err instanceof TranslationUnavailable) {
        throw new AppError("translation_unavailable", `${err.message} Keep the captions in the spoken language.`);
      }
      if (err instanceof TranslationFailed) {
        console.warn(`[${job.id}] ${err.message}`);
        throw new AppError("translation_failed", `${err.message}. Keep the captions in the spoken language.`);
      }
      throw err;
    }
  })
  .get("/:job_id/logo", liveJob, async (c) => {
    const job = jobOf(c);
    // Jobs stored before brand settings existed have no logo_position.
    if ((job.config.logo_position ?? "off") === "off") throw new AppError("not_found", `Job ${job.id} places no logo.`);
    const found = await readLogo(c.env, job.accountId);
    if (!found) throw new AppError("not_found", `The account of job ${job.id} has no logo.`);
    return c.body(found.body, 200, { "Content-Type": found.contentType, "Cache-Control": "no-store" });
  })
  .get("/:job_id/cookies", liveJob, async (c) => {
    const job = jobOf(c);
    // Only the job's own account's file, for the platform of the job's own URL (cookies/service.ts).
    const file = job.uploadId === null ? await cookiesForJob(c.env, job) : null;
    if (file === null) throw new AppError("not_found", `The account of job ${job.id} has no cookies file for its video's platform.`);
    return c.body(file, 200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
  });
