/**
 * Direct uploads over tus 1.0 (creation, termination, expiration) under
 * /api/v1/uploads, behind the API key guard. HEAD is served by the GET route
 * (Hono answers HEAD from GET without the body), so GET also returns the
 * upload as JSON for clients that do not speak tus.
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env.ts";
import { AppError, ERROR_CODES, type ErrorCode } from "../http/errors.ts";
import { fieldErrors } from "../http/validate.ts";
import {
  appendToUpload,
  createUpload,
  describeUpload,
  optionsHeaders,
  terminateUpload,
  uploadHeaders,
  type TusRequest,
} from "../uploads/service.ts";
import { TUS_VERSION } from "../uploads/tus-headers.ts";
import type { UploadView } from "../uploads/upload-state.ts";

const UploadIdParam = z.object({
  upload_id: z.string().openapi({ param: { name: "upload_id", in: "path" }, example: "upl_4Xq9a1B2c3D4e5F6g7H8i9" }),
});

const TusHeaders = z.object({
  "tus-resumable": z.string().optional().openapi({ description: `Required: ${TUS_VERSION} (412 otherwise).` }),
});

export const Upload = z
  .object({
    upload_id: z.string(),
    length: z.number().int().positive(),
    offset: z.number().int().nonnegative(),
    file_name: z.string().nullable(),
    status: z.enum(["uploading", "complete"]),
    created_at: z.string(),
    expires_at: z.string().nullable().openapi({ description: "null once a job has taken the upload" }),
    job_id: z.string().nullable(),
  })
  .openapi("Upload");

const ProblemRef = z.object({}).passthrough().openapi({ type: "object", description: "RFC 9457 problem document (see Problem)" });

const TUS_RESPONSE_HEADERS_DOC = {
  "Tus-Resumable": { schema: { type: "string" as const }, description: TUS_VERSION },
};

/** Problem responses grouped by status, as the hand-kept operations document them. */
function problems(codes: ErrorCode[]) {
  const all: ErrorCode[] = [...codes, "unauthorized", "rate_limited", "internal_error", "service_unavailable"];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(all)) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, statusCodes]) => [
      status,
      {
        description: `Problem: ${statusCodes.join(", ")}`,
        content: { "application/problem+json": { schema: ProblemRef.openapi({ description: `code: ${statusCodes.join(" | ")}` }) } },
      },
    ]),
  );
}

const TUS_COMMON: ErrorCode[] = ["tus_version_unsupported", "invalid_request"];

const createUploadRoute = createRoute({
  operationId: "createUpload",
  method: "post",
  path: "/",
  summary: "Create an upload (tus creation)",
  description:
    "Upload-Length is the file's size in bytes; Upload-Metadata may carry `filename` (base64), which becomes the job's title. " +
    "Then PATCH the bytes in chunks of at most 50 MiB.",
  request: {
    headers: TusHeaders.extend({
      "upload-length": z.string().optional().openapi({ description: "Total size in bytes" }),
      "upload-metadata": z.string().optional().openapi({ description: "tus metadata: `filename <base64>,filetype <base64>`" }),
    }),
  },
  responses: {
    201: {
      description: "Created; Location is the upload's URL",
      headers: { ...TUS_RESPONSE_HEADERS_DOC, Location: { schema: { type: "string" } }, "Upload-Expires": { schema: { type: "string" } } },
    },
    ...problems([...TUS_COMMON, "upload_too_large", "upload_limit_reached"]),
  },
});

const getUploadRoute = createRoute({
  operationId: "getUpload",
  method: "get",
  path: "/{upload_id}",
  summary: "An upload's state (tus HEAD gives the same headers without the body)",
  request: { params: UploadIdParam },
  responses: {
    200: {
      description: "The upload; Upload-Offset and Upload-Length headers as for HEAD",
      headers: { ...TUS_RESPONSE_HEADERS_DOC, "Upload-Offset": { schema: { type: "string" } }, "Upload-Length": { schema: { type: "string" } } },
      content: { "application/json": { schema: Upload } },
    },
    ...problems(["tus_version_unsupported", "not_found", "upload_expired"]),
  },
});

const patchUploadRoute = createRoute({
  operationId: "appendToUpload",
  method: "patch",
  path: "/{upload_id}",
  summary: "Append bytes at Upload-Offset (tus PATCH)",
  description: "At most 50 MiB per PATCH. The last byte completes the upload; then submit a job with its upload_id.",
  request: {
    params: UploadIdParam,
    headers: TusHeaders.extend({ "upload-offset": z.string().optional().openapi({ description: "The upload's current offset (HEAD)" }) }),
    body: { content: { "application/offset+octet-stream": { schema: z.string().openapi({ format: "binary" }) } } },
  },
  responses: {
    204: { description: "Stored; Upload-Offset is the new offset", headers: { ...TUS_RESPONSE_HEADERS_DOC, "Upload-Offset": { schema: { type: "string" } } } },
    ...problems([
      ...TUS_COMMON,
      "not_found",
      "upload_expired",
      "upload_offset_mismatch",
      "upload_busy",
      "upload_chunk_too_large",
      "upload_length_exceeded",
      "unsupported_media_type",
      "service_unavailable",
    ]),
  },
});

const deleteUploadRoute = createRoute({
  operationId: "deleteUpload",
  method: "delete",
  path: "/{upload_id}",
  summary: "Discard an upload (tus termination)",
  request: { params: UploadIdParam, headers: TusHeaders },
  responses: {
    204: { description: "Deleted", headers: TUS_RESPONSE_HEADERS_DOC },
    ...problems(["tus_version_unsupported", "not_found", "upload_expired", "upload_in_use", "upload_busy"]),
  },
});

const optionsDoc = {
  summary: "tus discovery (no key needed)",
  security: [],
  responses: {
    204: {
      description: "Tus-Version, Tus-Extension (creation,termination,expiration) and Tus-Max-Size (the largest plan's limit)",
      headers: {
        "Tus-Version": { schema: { type: "string" as const } },
        "Tus-Extension": { schema: { type: "string" as const } },
        "Tus-Max-Size": { schema: { type: "string" as const } },
      },
    },
    ...problems(["not_found"]),
  },
};
const optionsRoute = createRoute({ method: "options", path: "/", operationId: "discoverUploads", ...optionsDoc });
const optionsUploadRoute = createRoute({ method: "options", path: "/{upload_id}", operationId: "discoverUpload", request: { params: UploadIdParam }, ...optionsDoc });

function tusRequest(raw: Request): TusRequest {
  return { header: (name) => raw.headers.get(name) ?? undefined, body: raw.body };
}

function presentUpload(upload: UploadView) {
  return {
    upload_id: upload.uploadId,
    length: upload.length,
    offset: upload.offset,
    file_name: upload.fileName,
    status: upload.status === "complete" ? ("complete" as const) : ("uploading" as const),
    created_at: upload.createdAt,
    expires_at: upload.expiresAt,
    job_id: upload.jobId,
  };
}

/** Every tus answer names the protocol version, errors included. */
const tusResumable = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "OPTIONS") c.header("Tus-Resumable", TUS_VERSION);
  await next();
});

export const uploads = new OpenAPIHono<AppEnv>({
  defaultHook: (result) => {
    if (!result.success) throw new AppError("invalid_request", "The request is invalid.", { errors: fieldErrors(result.error.issues) });
  },
});

uploads.use("*", tusResumable);
uploads
  .openapi(optionsRoute, (c) => c.body(null, 204, optionsHeaders(c.env)))
  .openapi(optionsUploadRoute, (c) => c.body(null, 204, optionsHeaders(c.env)))
  .openapi(createUploadRoute, async (c) => {
    const upload = await createUpload(c.env, c.get("auth"), tusRequest(c.req.raw));
    return c.body(null, 201, { ...uploadHeaders(upload), Location: `/api/v1/uploads/${upload.uploadId}` });
  })
  .openapi(getUploadRoute, async (c) => {
    const isHead = c.req.method === "HEAD";
    const upload = await describeUpload(c.env, c.get("auth"), c.req.valid("param").upload_id, tusRequest(c.req.raw), isHead);
    for (const [name, value] of Object.entries(uploadHeaders(upload))) c.header(name, value);
    return c.json(presentUpload(upload), 200);
  })
  .openapi(patchUploadRoute, async (c) => {
    const upload = await appendToUpload(c.env, c.get("auth"), c.req.valid("param").upload_id, tusRequest(c.req.raw));
    return c.body(null, 204, uploadHeaders(upload));
  })
  .openapi(deleteUploadRoute, async (c) => {
    await terminateUpload(c.env, c.get("auth"), c.req.valid("param").upload_id, tusRequest(c.req.raw));
    return c.body(null, 204, { "Tus-Resumable": TUS_VERSION });
  });

// HEAD is answered by the GET route above; documented here as the tus operation it is.
uploads.openAPIRegistry.registerPath({
  method: "head",
  path: "/{upload_id}",
  operationId: "getUploadOffset",
  summary: "The upload's offset (tus HEAD)",
  request: { params: UploadIdParam, headers: TusHeaders },
  responses: {
    200: {
      description: "Upload-Offset, Upload-Length, Upload-Metadata, Upload-Expires",
      headers: { ...TUS_RESPONSE_HEADERS_DOC, "Upload-Offset": { schema: { type: "string" } }, "Upload-Length": { schema: { type: "string" } } },
    },
    ...problems(["tus_version_unsupported", "not_found", "upload_expired"]),
  },
});
