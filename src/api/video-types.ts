import { VIDEO_TYPES, type VideoType } from "#contract";
import { apiApp, apiRoute } from "../http/api-app.ts";
import { AppError } from "../http/errors.ts";
import { VIDEO_TYPE_DESCRIPTIONS } from "../jobs/video-types.ts";
import { VideoTypes } from "./openapi-schemas.ts";

export { VIDEO_TYPE_DESCRIPTIONS };


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
