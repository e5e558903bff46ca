/**
 * Uploading a local file with tus 1.0 (tus-js-client), as POST/PATCH
 * /api/v1/uploads expect it: 20 MiB chunks (the API takes at most 50 MiB per
 * PATCH), the file's name as metadata (it becomes the job's title), retries
 * that resume from the server's offset after a dropped connection, and, with
 * a state file, resumption across runs. Node only (it reads the file).
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { Upload, type HttpResponse } from "tus-js-client";
import { ClipjobsError } from "./errors.ts";
import { JsonFileUrlStorage } from "./upload-store.ts";

export const UPLOADS_PATH = "/api/v1/uploads";
export const DEFAULT_CHUNK_BYTES = 20 * 1024 * 1024;
/** Pauses before each retry of a failed request; a retry first asks the server for its offset. */
const RETRY_DELAYS_MS = [0, 1000, 3000, 5000, 10_000, 20_000];

export interface UploadFileOptions {
  baseUrl: string;
  apiKey: string | undefined;
  /** The JSON file that remembers unfinished uploads between runs; omitted: this run only. */
  stateFile?: string;
  chunkBytes?: number;
  /** As bytes are sent (counted from the start of the file). */
  onProgress?: (sentBytes: number, totalBytes: number) => void;
  /** When an earlier run's upload of this file is continued: the bytes the server already has. */
  onResume?: (offset: number, totalBytes: number) => void;
}

export interface UploadedFile {
  uploadId: string;
  uploadUrl: string;
  size: number;
  /** Bytes the server already had when this run started (resumed from an earlier run). */
  resumedFrom: number;
}

/** The API's problem from a failed tus request, or a network failure, as a ClipjobsError. */
function uploadError(error: Error, baseUrl: string): ClipjobsError {
  const response = (error as Error & { originalResponse?: HttpResponse | null }).originalResponse;
  if (response) {
    const body = response.getBody();
    try {
      const problem = JSON.parse(body) as { code?: unknown; detail?: unknown };
      if (typeof problem.code === "string" && typeof problem.detail === "string") {
        return new ClipjobsError(problem.code, problem.detail, response.getStatus());
      }
    } catch {
      // Not a problem document: fall through.
    }
    return new ClipjobsError("unexpected_response", `The upload answered HTTP ${response.getStatus()}.`, response.getStatus());
  }
  return new ClipjobsError("network_error", `Could not upload to ${baseUrl}: ${error.message}`, null);
}

export async function uploadFile(path: string, options: UploadFileOptions): Promise<UploadedFile> {
  const { size } = await stat(path);
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  let resumedFrom = 0;
  let fromEarlierRun = false;
  return new Promise<UploadedFile>((resolve, reject) => {
    const upload = new Upload(createReadStream(path), {
      endpoint: `${baseUrl}${UPLOADS_PATH}`,
      chunkSize: options.chunkBytes ?? DEFAULT_CHUNK_BYTES,
      retryDelays: RETRY_DELAYS_MS,
      headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
      metadata: { filename: basename(path) },
      ...(options.stateFile ? { urlStorage: new JsonFileUrlStorage(options.stateFile) } : {}),
      storeFingerprintForResuming: options.stateFile !== undefined,
      removeFingerprintOnSuccess: true,
      // The HEAD that resumes an earlier run's upload tells how much the server already has.
      onAfterResponse: (request, response) => {
        if (!fromEarlierRun || request.getMethod() !== "HEAD" || response.getStatus() !== 200) return;
        fromEarlierRun = false;
        const offset = Number(response.getHeader("Upload-Offset"));
        if (Number.isFinite(offset) && offset > 0) {
          resumedFrom = offset;
          options.onResume?.(offset, size);
        }
      },
      onProgress: (sent, total) => options.onProgress?.(sent, total),
      onSuccess: () => {
        const uploadUrl = upload.url ?? "";
        const uploadId = uploadUrl.split("/").at(-1) ?? "";
        resolve({ uploadId, uploadUrl, size, resumedFrom });
      },
      onError: (error) => reject(uploadError(error, baseUrl)),
    });
    upload
      .findPreviousUploads()
      .then((previous) => {
        const latest = previous.at(-1);
        if (latest) {
          fromEarlierRun = true;
          upload.resumeFromPreviousUpload(latest);
        }
        upload.start();
      })
      .catch((error: unknown) => reject(error));
  });
}
