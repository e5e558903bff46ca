import { Hono } from "hono";
import { z } from "zod";
import { VIDEO_TYPES } from "../engine/contract";
import type { AppEnv } from "../http/app-env";
import { ERROR_CODES, type ErrorCode } from "../http/errors";
import { CONFIG_NAME_PATTERN } from "./configs";
import * as schemas from "./openapi-schemas";
import { TRANSCRIPT_ERRORS, TRANSCRIPT_FORMATS, TranscriptDocument } from "./transcript";

type JsonObject = Record<string, unknown>;
type Method = "get" | "post" | "put" | "delete";

interface Operation {
  method: Method;
  path: string;
  summary: string;
  /** false: no bearer key (openapi.json, health). */
  authenticated?: boolean;
  parameters?: JsonObject[];
  body?: keyof typeof COMPONENTS;
  success: { status: number; description: string; schema?: keyof typeof COMPONENTS; alsoAsText?: string[] };
  errors: ErrorCode[];
}

const COMPONENTS = {
  SubmitJobBody: schemas.SubmitJobBody,
  SubmitJobResponse: schemas.SubmitJobResponse,
  Job: schemas.Job,
  JobList: schemas.JobList,
  Usage: schemas.Usage,
  VideoTypes: schemas.VideoTypes,
  ClipConfig: schemas.ConfigBody,
  SavedConfig: schemas.SavedConfig,
  ConfigList: schemas.ConfigList,
  Health: schemas.Health,
  Transcript: TranscriptDocument,
  Problem: schemas.Problem,
} satisfies Record<string, z.ZodType>;

/** Every failure that any authenticated route can answer, on top of its own. */
const AUTHENTICATED_ERRORS: ErrorCode[] = ["unauthorized", "rate_limited", "internal_error"];
const BODY_ERRORS: ErrorCode[] = ["invalid_request", "payload_too_large", "unsupported_media_type"];

const jobIdParam = { name: "job_id", in: "path", required: true, schema: { type: "string" } };
const configNameParam = { name: "name", in: "path", required: true, schema: { type: "string", pattern: CONFIG_NAME_PATTERN.source } };

/** The public API, route by route. Tests check this list against the app's routes. */
export const OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/api/v1/jobs",
    summary: "Submit a video for clipping",
    parameters: [
      {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description: "Same key and body within 24 hours returns the first response without a new job.",
        schema: { type: "string", maxLength: 255 },
      },
    ],
    body: "SubmitJobBody",
    success: { status: 201, description: "Job queued", schema: "SubmitJobResponse" },
    errors: [...BODY_ERRORS, "invalid_video_url", "invalid_captions_url", "invalid_video_type", "insufficient_credits", "active_job_limit", "config_not_found", "idempotency_key_reused"],
  },
  {
    method: "get",
    path: "/api/v1/jobs",
    summary: "List jobs, newest first",
    parameters: [
      {
        name: "status",
        in: "query",
        description: "Default `completed`; `all` for every status.",
        schema: { type: "string", enum: ["all", "queued", "processing", "completed", "failed", "canceled"], default: "completed" },
      },
      { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 50 } },
      { name: "cursor", in: "query", description: "next_cursor of the previous page", schema: { type: "string" } },
    ],
    success: { status: 200, description: "A page of jobs", schema: "JobList" },
    errors: ["invalid_request"],
  },
  {
    method: "get",
    path: "/api/v1/jobs/{job_id}",
    summary: "Get a job, shaped by its status",
    parameters: [jobIdParam],
    success: { status: 200, description: "The job", schema: "Job" },
    errors: ["not_found"],
  },
  {
    method: "post",
    path: "/api/v1/jobs/{job_id}/cancel",
    summary: "Cancel a queued or processing job",
    parameters: [jobIdParam],
    success: { status: 200, description: "The canceled job", schema: "Job" },
    // No body is needed, but one that is sent passes the same JSON body guard as every POST.
    errors: [...BODY_ERRORS, "not_found", "job_not_cancelable"],
  },
  {
    method: "get",
    path: "/api/v1/jobs/{job_id}/transcript",
    summary: "Get a completed job's transcript: words and sentences with times, or WebVTT, SRT or plain text",
    parameters: [
      jobIdParam,
      {
        name: "format",
        in: "query",
        description: "json (default), vtt (WebVTT), srt (SubRip) or txt (one sentence per line)",
        schema: { type: "string", enum: [...TRANSCRIPT_FORMATS], default: "json" },
      },
    ],
    success: { status: 200, description: "The transcript", schema: "Transcript", alsoAsText: ["text/vtt", "application/x-subrip", "text/plain"] },
    errors: [...TRANSCRIPT_ERRORS],
  },
  {
    method: "delete",
    path: "/api/v1/jobs/{job_id}",
    summary: "Delete a finished job and its clips",
    parameters: [jobIdParam],
    success: { status: 204, description: "Deleted" },
    errors: ["not_found", "job_not_deletable"],
  },
  {
    method: "get",
    path: "/api/v1/usage",
    summary: "Credit balance of the current period",
    success: { status: 200, description: "Usage", schema: "Usage" },
    errors: [],
  },
  {
    method: "get",
    path: "/api/v1/video-types",
    summary: "Supported video types and their analysis approach",
    success: { status: 200, description: "Video types", schema: "VideoTypes" },
    errors: [],
  },
  {
    method: "get",
    path: "/api/v1/configs",
    summary: "List saved configurations",
    success: { status: 200, description: "Saved configurations", schema: "ConfigList" },
    errors: [],
  },
  {
    method: "get",
    path: "/api/v1/configs/{name}",
    summary: "Get a saved configuration",
    parameters: [configNameParam],
    success: { status: 200, description: "The configuration", schema: "SavedConfig" },
    errors: ["invalid_request", "not_found"],
  },
  {
    method: "put",
    path: "/api/v1/configs/{name}",
    summary: "Create (201) or replace (200) a saved configuration; omitted fields take their defaults",
    parameters: [configNameParam],
    body: "ClipConfig",
    success: { status: 200, description: "Replaced (201 when created)", schema: "SavedConfig" },
    errors: [...BODY_ERRORS, "conflict"],
  },
  {
    method: "delete",
    path: "/api/v1/configs/{name}",
    summary: "Delete a saved configuration",
    parameters: [configNameParam],
    success: { status: 204, description: "Deleted" },
    errors: ["invalid_request", "not_found"],
  },
  {
    method: "get",
    path: "/api/v1/openapi.json",
    summary: "This document",
    authenticated: false,
    success: { status: 200, description: "OpenAPI 3.1 document" },
    errors: [],
  },
  {
    method: "get",
    path: "/health",
    summary: "Liveness",
    authenticated: false,
    success: { status: 200, description: "Service is up", schema: "Health" },
    errors: [],
  },
];

function ref(name: keyof typeof COMPONENTS) {
  return { $ref: `#/components/schemas/${name}` };
}

function toComponent(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input", unrepresentable: "any" });
  return rest;
}

const RATE_LIMIT_HEADERS = {
  "RateLimit-Policy": { description: 'e.g. "default";q=60;w=60', schema: { type: "string" } },
  RateLimit: { description: 'e.g. "default";r=59;t=60', schema: { type: "string" } },
  "Request-Id": { description: "Identifies the request in logs and problem documents", schema: { type: "string" } },
};

function responsesFor(op: Operation): JsonObject {
  const authenticated = op.authenticated !== false;
  const headers = authenticated ? RATE_LIMIT_HEADERS : { "Request-Id": RATE_LIMIT_HEADERS["Request-Id"] };
  const responses: JsonObject = {
    [op.success.status]: {
      description: op.success.description,
      headers,
      ...(op.success.schema
        ? {
            content: {
              "application/json": { schema: ref(op.success.schema) },
              ...Object.fromEntries((op.success.alsoAsText ?? []).map((type) => [type, { schema: { type: "string" } }])),
            },
          }
        : {}),
    },
  };
  if (op.method === "put") responses["201"] = { description: "Created", headers, content: { "application/json": { schema: ref(op.success.schema!) } } };
  const codes = [...op.errors, ...(authenticated ? AUTHENTICATED_ERRORS : ["internal_error" as const])];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  for (const [status, statusCodes] of byStatus) {
    responses[String(status)] = {
      description: `Problem: ${statusCodes.join(", ")}`,
      headers: status === 429 ? { ...headers, "Retry-After": { schema: { type: "integer" } } } : headers,
      content: { "application/problem+json": { schema: { allOf: [ref("Problem"), { properties: { code: { enum: statusCodes } } }] } } },
    };
  }
  return responses;
}

export function buildOpenApiDocument(): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const op of OPERATIONS) {
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      summary: op.summary,
      operationId: `${op.method}${op.path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ?? "").toUpperCase())}`,
      ...(op.authenticated === false ? { security: [] } : {}),
      ...(op.parameters ? { parameters: op.parameters } : {}),
      ...(op.body ? { requestBody: { required: true, content: { "application/json": { schema: ref(op.body) } } } } : {}),
      responses: responsesFor(op),
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "clipjobs API",
      version: "1.0.0",
      description:
        `Long video in, short ready-to-post clips out. video_type is one of ${VIDEO_TYPES.join(", ")}. ` +
        "Every error is application/problem+json with a stable `code` (see /docs/errors). " +
        "Authenticated requests share a rolling 60-second window per account; see the RateLimit headers.",
    },
    servers: [{ url: "/" }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API key: ck_live_..." } },
      schemas: Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, toComponent(schema)])),
    },
  };
}

let cachedDocument: string | null = null;

export const openapi = new Hono<AppEnv>().get("/", (c) => {
  cachedDocument ??= JSON.stringify(buildOpenApiDocument());
  c.header("Content-Type", "application/json; charset=UTF-8");
  c.header("Cache-Control", "public, max-age=300");
  return c.body(cachedDocument);
});
