/**
 * The source of an upload job: the Worker serves it on the job channel
 * (GET {callback_base}/internal/v1/jobs/:id/source, Bearer job token), since
 * an upload has no public URL. Same byte cap, total and stall timeouts as a
 * download; a connection that drops mid-way resumes with a Range request.
 */
import { stat } from "node:fs/promises";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { JobFailure, errorMessage } from "../shared/errors.ts";
import { sourceWriteStream } from "./write-stream.ts";

export interface UploadReadRequest {
  url: string;
  token: string;
  destPath: string;
  maxBytes: number;
  tooLargeMessage: string;
  timeoutMs: number;
  stallTimeoutMs: number;
  signal: AbortSignal;
  onProgress: (fraction: number) => void;
  /** Bytes may have reached destPath (for a reader following the file as it grows). */
  onWritten?: () => void;
  /** Attempts in all, the first included (resumes after a dropped connection). */
  attempts?: number;
}

const DEFAULT_ATTEMPTS = 4;

/** The file name the Worker gives in Content-Disposition (filename*), if any. */
export function fileNameFromDisposition(header: string | null): string | null {
  const match = /filename\*=UTF-8''([^;]+)/i.exec(header ?? "");
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]!.trim());
  } catch {
    return null;
  }
}

export async function readUploadedSource(req: UploadReadRequest): Promise<{ bytes: number; fileName: string | null }> {
  const local = new AbortController();
  let stopReason: unknown;
  const stop = (reason: unknown) => {
    stopReason ??= reason;
    local.abort(reason);
  };
  const onOuterAbort = () => stop(req.signal.reason);
  if (req.signal.aborted) throw req.signal.reason;
  req.signal.addEventListener("abort", onOuterAbort, { once: true });
  const seconds = (ms: number) => Math.round(ms / 1000);
  const total = setTimeout(
    () => stop(new JobFailure("source_unreachable", `Reading the uploaded video took longer than the ${seconds(req.timeoutMs)} s limit.`)),
    req.timeoutMs,
  );
  let stall: NodeJS.Timeout | undefined;
  const armStall = () => {
    if (stall) clearTimeout(stall);
    stall = setTimeout(
      () => stop(new JobFailure("source_unreachable", `The uploaded video stopped arriving for ${seconds(req.stallTimeoutMs)} s.`)),
      req.stallTimeoutMs,
    );
  };

  let bytes = 0;
  let size: number | null = null;
  let fileName: string | null = null;
  try {
    for (let attempt = 1; ; attempt += 1) {
      // Everything arrived before the connection dropped: nothing left to ask for.
      if (size !== null && bytes > 0 && bytes >= size) return { bytes, fileName };
      armStall();
      try {
        const response = await fetch(req.url, {
          headers: { Authorization: `Bearer ${req.token}`, ...(bytes > 0 ? { Range: `bytes=${bytes}-` } : {}) },
          signal: local.signal,
        });
        const resumed = bytes > 0 && response.status === 206;
        if (!(response.status === 200 || resumed) || !response.body) {
          await response.body?.cancel();
          throw new JobFailure("source_unreachable", `The uploaded video could not be read (HTTP ${response.status}).`);
        }
        fileName ??= fileNameFromDisposition(response.headers.get("content-disposition"));
        if (!resumed) {
          bytes = 0;
          const declared = Number(response.headers.get("content-length"));
          size = Number.isFinite(declared) && declared >= 0 ? declared : null;
          if (size !== null && size > req.maxBytes) {
            await response.body.cancel();
            throw new JobFailure("source_too_large", req.tooLargeMessage);
          }
        }
        const counter = new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            bytes += chunk.length;
            armStall();
            if (bytes > req.maxBytes) {
              stop(new JobFailure("source_too_large", req.tooLargeMessage));
              callback();
              return;
            }
            if (size) req.onProgress(Math.min(1, bytes / size));
            req.onWritten?.();
            callback(null, chunk);
          },
        });
        await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), counter, sourceWriteStream(req.destPath, resumed), {
          signal: local.signal,
        });
        if (size !== null && bytes < size) throw new Error("the connection closed before the whole file arrived");
        return { bytes, fileName };
      } catch (error) {
        if (stopReason) throw stopReason;
        // A refusal (e.g. 409: the job ended on the Worker's side) is final; only dropped connections are retried.
        if (error instanceof JobFailure) throw error;
        if (attempt >= (req.attempts ?? DEFAULT_ATTEMPTS)) {
          throw new JobFailure("source_unreachable", `Reading the uploaded video failed: ${errorMessage(error)}.`, { cause: error });
        }
        // Resume after what reached the disk (bytes still in the write stream's buffer were lost with it).
        bytes = await stat(req.destPath).then((s) => s.size, () => 0);
      }
    }
  } finally {
    clearTimeout(total);
    if (stall) clearTimeout(stall);
    req.signal.removeEventListener("abort", onOuterAbort);
  }
}
