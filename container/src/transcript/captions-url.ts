/**
 * Source 4: the captions file the client named at submission (captions_url).
 * Fetched under exactly the rules of a direct video link (scheme, no
 * credentials, every address and redirect hop checked, pinned connections,
 * time limits) but capped at MAX_CAPTIONS_BYTES, then parsed strictly. The
 * client asked for this file by name, so anything unusable fails the job with
 * captions_invalid instead of being ignored or half-used.
 */
import { readFile } from "node:fs/promises";
import { JobFailure } from "../shared/errors.ts";
import type { AddressPolicy, Resolver } from "../source/address-policy.ts";
import { safeDownload } from "../source/safe-fetch.ts";
import { CaptionsParseError, MAX_CAPTIONS_BYTES, decodeCaptionBytes, parseCaptions, type Cue } from "./cues.ts";

export interface CaptionsUrlRequest {
  url: string;
  destPath: string;
  timeoutMs: number;
  stallTimeoutMs: number;
  maxRedirects: number;
  policy: AddressPolicy;
  resolver: Resolver;
  signal: AbortSignal;
}

function invalid(message: string): JobFailure {
  return new JobFailure("captions_invalid", message.slice(0, 480));
}

export async function fetchCaptionsUrl(req: CaptionsUrlRequest): Promise<Cue[]> {
  try {
    await safeDownload({
      url: req.url,
      destPath: req.destPath,
      maxBytes: MAX_CAPTIONS_BYTES,
      tooLargeMessage: `The captions file is larger than ${MAX_CAPTIONS_BYTES / 1024 / 1024} MiB.`,
      timeoutMs: req.timeoutMs,
      stallTimeoutMs: req.stallTimeoutMs,
      maxRedirects: req.maxRedirects,
      policy: req.policy,
      resolver: req.resolver,
      signal: req.signal,
    });
  } catch (error) {
    if (req.signal.aborted) throw error;
    // safeDownload words its failures for a video; the client needs to know it was the captions file.
    if (error instanceof JobFailure) {
      const detail = error.code === "source_not_video" ? "The captions URL returned a web page (HTML), not an SRT or WebVTT file." : error.message.replace(/\bvideo\b/g, "captions");
      throw invalid(`captions_url: ${detail}`);
    }
    throw error;
  }
  try {
    return parseCaptions(decodeCaptionBytes(await readFile(req.destPath))).cues;
  } catch (error) {
    if (error instanceof CaptionsParseError) throw invalid(`captions_url: ${error.message}`);
    throw error;
  }
}
