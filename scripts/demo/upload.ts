/**
 * `npm run demo -- ./my-video.mp4`: a local file goes to the Worker through
 * its tus upload API (POST/PATCH /api/v1/uploads, with tus-js-client) in
 * 20 MiB chunks, resuming after a dropped connection, like any client would.
 */
import { createReadStream, statSync } from "node:fs";
import { basename } from "node:path";
import { Upload } from "tus-js-client";

/** Below the server's 50 MiB PATCH limit. */
export const DEMO_CHUNK_BYTES = 20 * 1024 * 1024;

/** Uploads `path`; resolves with the upload id. `onProgress` gets bytes sent and the total. */
export function uploadLocalFile(workerUrl: string, apiKey: string, path: string, onProgress: (sent: number, total: number) => void): Promise<string> {
  const size = statSync(path).size;
  return new Promise((resolve, reject) => {
    const upload = new Upload(createReadStream(path), {
      endpoint: `${workerUrl}/api/v1/uploads`,
      uploadSize: size,
      chunkSize: DEMO_CHUNK_BYTES,
      retryDelays: [0, 1000, 3000, 5000, 10000],
      headers: { Authorization: `Bearer ${apiKey}` },
      metadata: { filename: basename(path) },
      onProgress: onProgress,
      onError: reject,
      onSuccess: () => {
        const id = /\/(upl_[A-Za-z0-9]+)$/.exec(upload.url ?? "")?.[1];
        if (id) resolve(id);
        else reject(new Error(`unexpected upload URL ${upload.url ?? "(none)"}`));
      },
    });
    upload.start();
  });
}
