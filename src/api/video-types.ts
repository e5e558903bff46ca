import { VIDEO_TYPES, type VideoType } from "#contract";
import { apiApp, apiRoute } from "../http/api-app";
import { AppError } from "../http/errors";
import { VideoTypes } from "./openapi-schemas";

/** SPEC section 3: what each analysis approach looks for. */
export const VIDEO_TYPE_DESCRIPTIONS: Record<VideoType, string> = {
  podcast:
    "Speech-driven: clips start and end in pauses between sentences, never mid-phrase; scored on speech density and vocal emphasis; scene cuts mostly ignored. Interviews too. Needs speech.",
  lecture:
    "Slides and screens: clips aligned to scene changes (slide changes) with continuous speech; tutorials, webinars, talks. Needs speech.",
  gaming: "Excitement: loudness peaks and bursts of motion and cuts; the peak sits in the second half of the clip.",
  sports: "Like gaming, weighted to crowd/commentary loudness peaks and replays.",
  vlog: "Balanced mix of speech continuity, motion and scene changes; without speech, motion, scene changes and loudness.",
  general: "The default blend when the content is unknown; without speech, it clips on what can be seen and heard.",
};

export function isVideoType(value: unknown): value is VideoType {
  return typeof value === "string" && (VIDEO_TYPES as readonly string[]).includes(value);
}

/** The 400 for any video_type outside the list, naming the allowed values. */
export function invalidVideoType(value: unknown): AppError {
  const allowed = VIDEO_TYPES.join(", ");
  return new AppError("invalid_video_type", `video_type ${JSON.stringify(value)} is not supported; allowed values: ${allowed}.`, {
    errors: [{ path: "video_type", message: `must be one of: ${allowed}` }],
    extra: { allowed_values: [...VIDEO_TYPES] },
  });
}

const DEFAULT_VIDEO_TYPE: VideoType = "general";

export function videoTypesJson() {
  return {
    video_types: VIDEO_TYPES.map((value) => ({ value, description: VIDEO_TYPE_DESCRIPTIONS[value] })),
    default: DEFAULT_VIDEO_TYPE,
  };
}

const videoTypesRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "Supported video types and their analysis approach",
  operationId: "listVideoTypes",
  responses: { 200: { description: "Video types", content: { "application/json": { schema: VideoTypes } } } },
}, {
  errors: [],
});

export const videoTypes = apiApp().openapi(videoTypesRoute, (c) => c.json(videoTypesJson(), 200));
