/** The MCP tools on the account: usage, saved configurations, and creating a direct upload. Each calls the service its REST route calls. */
import { encodeBase64 } from "hono/utils/encode";
import { z } from "zod";
import { ClipConfig } from "#contract";
import { ConfigName } from "../api/configs.ts";
import { readUsage } from "../api/usage.ts";
import { saveConfig } from "../configs/save.ts";
import { listConfigs, savedConfigToJson } from "../db/configs.ts";
import { UPLOADS_PATH } from "../http/api-guard.ts";
import { MAX_PATCH_BYTES } from "../uploads/limits.ts";
import { createUpload, type TusRequest } from "../uploads/service.ts";
import { PATCH_CONTENT_TYPE, TUS_VERSION } from "../uploads/tus-headers.ts";
import { defineTool } from "./tool.ts";
import { toolResult } from "./tool-result.ts";

/** What a client sends in place of the key: the key itself stays out of the model's context. */
const AUTHORIZATION_PLACEHOLDER = "Bearer <the API key this MCP server is configured with>";
/** A chunk size that suits most connections (the server takes up to MAX_PATCH_BYTES). */
const SUGGESTED_CHUNK_BYTES = 20 * 1024 * 1024;

export const getUsageTool = defineTool({
  name: "get_usage",
  title: "Credits left",
  description:
    "The account's plan and credits in the current period: credits_remaining (what new jobs can use), credits_used, credits_reserved (held by running jobs), and when the period ends. A job costs credits by the length of its source. Also kept_source_bytes of max_kept_source_bytes: upload sources kept for clip edits (the oldest is released past the limit).",
  input: z.object({}),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_input, { env, auth }) {
    return toolResult(await readUsage(env.DB, auth.accountId));
  },
});

export const listConfigsTool = defineTool({
  name: "list_configs",
  title: "List saved configurations",
  description:
    "The account's saved clip configurations by name (aspect ratio, resolution, clip length, number of clips, reframing, layout, captions). Pass a name as config_name to submit_job.",
  input: z.object({}),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_input, { env, auth }) {
    const saved = await listConfigs(env.DB, auth.accountId);
    return toolResult({ configs: saved.map(savedConfigToJson), count: saved.length });
  },
});

export const saveConfigTool = defineTool({
  name: "save_config",
  title: "Save a configuration",
  description:
    "Creates or replaces a named clip configuration for later jobs (submit_job's config_name). Every setting left out takes its default, so send all the settings you want kept when replacing one. " +
    "Examples: square 1:1 clips for a feed, {aspect_ratio: \"1:1\"}; three short 20-30 s clips, {min_clip_seconds: 20, max_clip_seconds: 30, max_clips: 3}.",
  input: z.strictObject({
    name: ConfigName.describe("1-64 characters: lower-case letters, digits, '_' or '-'"),
    config: ClipConfig.default(ClipConfig.parse({})).describe("The settings; each one left out takes its default"),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ name, config }, { env, auth }) {
    const { created, saved } = await saveConfig(env, auth.accountId, name, config);
    return toolResult({ created, config: savedConfigToJson(saved) });
  },
});

export const createUploadTool = defineTool({
  name: "create_upload",
  title: "Create an upload for a local video file",
  description:
    "For a video that is a local file rather than a URL: creates a resumable tus 1.0 upload and answers where and how to send the bytes. " +
    "Whoever has the file then sends it with PATCH requests to upload_url (each body at most max_chunk_bytes, with the headers given; Upload-Offset is the number of bytes already sent), or with any tus client. " +
    "After the last byte, call submit_job with upload_id. An upload no job uses expires after 24 hours.",
  input: z.strictObject({
    file_name: z.string().min(1).max(255).describe("The file's name; it becomes the job's title"),
    size_bytes: z.number().int().positive().describe("The file's exact size in bytes"),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ file_name: fileName, size_bytes: size }, { env, auth, origin }) {
    // The same tus creation as POST /api/v1/uploads, from the arguments instead of headers.
    const headers: Record<string, string> = {
      "tus-resumable": TUS_VERSION,
      "upload-length": String(size),
      "upload-metadata": `filename ${encodeBase64(new TextEncoder().encode(fileName).buffer)}`,
    };
    const request: TusRequest = { header: (name) => headers[name.toLowerCase()], body: null };
    const upload = await createUpload(env, auth, request);
    const uploadUrl = `${origin}${UPLOADS_PATH}/${upload.uploadId}`;
    return toolResult({
      upload_id: upload.uploadId,
      upload_url: uploadUrl,
      size_bytes: upload.length,
      expires_at: upload.expiresAt,
      method: "PATCH",
      headers: {
        Authorization: AUTHORIZATION_PLACEHOLDER,
        "Tus-Resumable": TUS_VERSION,
        "Content-Type": PATCH_CONTENT_TYPE,
        "Upload-Offset": "<bytes already sent: 0 for the first request>",
      },
      max_chunk_bytes: MAX_PATCH_BYTES,
      suggested_chunk_bytes: SUGGESTED_CHUNK_BYTES,
      resume:
        "After an interrupted request, HEAD upload_url with the Authorization and Tus-Resumable headers: its Upload-Offset header says where to continue.",
      example_whole_file_in_one_request: `curl -X PATCH '${uploadUrl}' -H 'Authorization: Bearer $CLIPJOBS_API_KEY' -H 'Tus-Resumable: ${TUS_VERSION}' -H 'Content-Type: ${PATCH_CONTENT_TYPE}' -H 'Upload-Offset: 0' --data-binary @${fileName.replace(/[^A-Za-z0-9._-]/g, "_")}`,
      next: `When every byte is sent, call submit_job with upload_id ${upload.uploadId}.`,
    });
  },
});
