/**
 * Reading a job's transcript back from the private bucket (the engine stored
 * it over the channel; storage.ts). It is never on {cdn_url}: only the
 * authenticated API and the dashboard serve it.
 */
import type { Job } from "../db/jobs.ts";
import { Transcript } from "#contract";
import { toPlainText, toSrt, toWebVtt } from "./transcript-formats.ts";
import { privateBucket, transcriptKey } from "./storage.ts";

/** The transcript of a completed job that has one, else null. */
export async function loadTranscript(env: Env, job: Job): Promise<Transcript | null> {
  if (job.status !== "completed" || !job.transcript) return null;
  // A job completed under the older layout may still have it in CLIPS until the sweep moves it.
  const object = (await privateBucket(env).get(transcriptKey(job.id))) ?? (await env.CLIPS.get(transcriptKey(job.id)));
  if (!object) return null;
  const parsed = Transcript.safeParse(await object.json());
  // Only the channel route writes this key, after validating the same schema.
  if (!parsed.success) throw new Error(`the stored transcript of ${job.id} does not match the contract`);
  return parsed.data;
}

/** Why a job has no transcript, in words for the API and the dashboard. */
export function noTranscriptReason(job: Job): string {
  if (job.status !== "completed") return `Job ${job.id} is ${job.status}; a transcript exists only for completed jobs.`;
  return `Job ${job.id} has no transcript${job.transcriptUnavailableReason ? `: ${job.transcriptUnavailableReason}` : "."}`;
}

export const TRANSCRIPT_RENDERINGS = {
  vtt: { contentType: "text/vtt; charset=utf-8", extension: "vtt", render: toWebVtt },
  srt: { contentType: "application/x-subrip; charset=utf-8", extension: "srt", render: toSrt },
  txt: { contentType: "text/plain; charset=utf-8", extension: "txt", render: toPlainText },
} as const;
