/**
 * A job's clip as the API shows it (GET /api/v1/jobs/{id}, the clip routes,
 * webhooks' payloads and the MCP tools): one schema, documented once, below
 * the doors that publish it.
 */
import { z } from "@hono/zod-openapi";
import { JUDGED_BY, REFRAME_USED, REMOVED_KINDS } from "#contract";

export const ClipDetail = z.object({
  url: z.url(),
  thumbnail_url: z.url(),
  start_seconds: z.number(),
  end_seconds: z.number(),
  duration_seconds: z.number(),
  score: z.number().min(0).max(1),
  reasons: z.array(z.string()),
  width: z.number().int(),
  height: z.number().int(),
  reframe: z.enum(REFRAME_USED).describe("What the picture followed: faces, the whole frame over a blurred copy of itself (fit: reframe=fit, or reframe=auto on a screen, slides or a picture with no subject), the region of most activity (no face found), or the centre"),
  faces_count: z.number().int().min(0).describe("Most faces seen together in the clip; 0 when none were found or looked for (reframe=center)"),
  text: z.string().nullable().describe("The words spoken inside the clip; null without a transcript"),
  title: z.string().nullable().describe("A short line chosen from the clip's own words; null without a transcript"),
  captions: z
    .object({ vtt_url: z.url(), srt_url: z.url() })
    .nullable()
    .describe("WebVTT and SRT captions timed from the clip's start, on {cdn_url}; null when none were made"),
  captions_burned: z.boolean().describe("Captions are drawn into the picture"),
  prompt_match: z.number().min(0).max(1).nullable().describe("How well the clip's words match the job's prompt (0-1); null without a prompt"),
  removed: z
    .array(
      z.object({
        start_seconds: z.number(),
        end_seconds: z.number(),
        kind: z.enum(REMOVED_KINDS),
      }),
    )
    .describe("Pauses (silence) and filler words cut out of the clip, in seconds of the source; duration_seconds is the clip's real length after them"),
  zooms: z
    .array(z.object({ start_seconds: z.number(), end_seconds: z.number() }))
    .describe("Where the picture pushed in on vocal emphasis (configuration zoom: emphasis), from the push in's start to the ease out's end, in seconds of the source; [] without zooms"),
  scores: z
    .object({
      hook: z.number().int().min(0).max(100).describe("The first seconds make a viewer stay"),
      payoff: z.number().int().min(0).max(100).describe("It ends on a resolution, an answer or a punchline"),
      standalone: z.number().int().min(0).max(100).describe("It makes sense without what came before"),
      energy: z.number().int().min(0).max(100).describe("Energy and emotion"),
    })
    .nullable()
    .describe("A language model's sub-scores (0-100) from the clip's words; null when signals alone judged the clip"),
  judged_by: z.enum(JUDGED_BY).describe("model: a language model read the clip's words and ranked it with the signals (its reason is the first of `reasons`); signals: the signal heuristics alone (see the job's `judgement.fallback_reason`)"),
  description: z.string().nullable().describe("The post: one to three sentences for the clip, in its caption language, written by the model; null on signals"),
  hashtags: z.array(z.string()).max(5).describe("The post: up to 5 hashtags written by the model; [] on signals"),
  version: z.number().int().min(1).describe("1 for the job's own render; each published edit (PATCH /api/v1/jobs/{job_id}/clips/{index}) adds one and publishes under new URLs"),
}).openapi("ClipDetail");
