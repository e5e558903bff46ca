/**
 * What a job's callback token may call. Every route of the engine channel
 * (under /internal/v1/jobs/:job_id) belongs to one scope; a token lists the
 * scopes its job was granted at dispatch, and the token middleware
 * (routes.ts) refuses a route outside them, or in no scope at all.
 *
 * The one place to extend: a new channel route gets its line in
 * CHANNEL_ROUTES (with an existing scope, or a new one added to SCOPES with
 * the rule that grants it). docs/architecture.md "Engine credentials" says so too.
 */
import { platformOfUrl } from "#contract";
import type { Job } from "../db/jobs.ts";

export const SCOPES = {
  /** progress, probe, complete, fail, interrupted: the job's own reports and transitions. */
  report: () => true,
  /** clips, thumbnails, caption sidecars and the transcript, into the private bucket. */
  upload: () => true,
  /** speech-to-text of the job's audio (Workers AI, billed to the service). */
  transcribe: () => true,
  /** the job's uploaded source: only a job made from a direct upload has one. */
  source: (job: Pick<Job, "uploadId">) => job.uploadId !== null,
  /** prompt-to-sentence similarity (Workers AI embeddings): only a job with a prompt asks. */
  similarity: (job: Pick<Job, "config">) => (job.config.prompt ?? null) !== null,
  /** caption translation (Workers AI m2m100): only a job with a caption_language asks. */
  translate: (job: Pick<Job, "config">) => (job.config.caption_language ?? null) !== null,
  /** clip judgement by a language model (Workers AI, docs/judgement.md): every job may ask, within its own budget (judge-budget.ts). */
  judge: () => true,
  /** the account's logo, from the private bucket: only a job whose configuration places one. Jobs stored before brand settings existed have no logo_position. */
  logo: (job: Pick<Job, "config">) => (job.config.logo_position ?? "off") !== "off",
  /** the account's cookies file for the platform of the job's video: only a job whose video is on a platform. */
  cookies: (job: Pick<Job, "uploadId" | "videoUrl">) => job.uploadId === null && platformOfUrl(job.videoUrl) !== null,
} satisfies Record<string, (job: Pick<Job, "uploadId" | "videoType" | "config" | "videoUrl">) => boolean>;

export type Scope = keyof typeof SCOPES;

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

interface ChannelRoute {
  method: "GET" | "POST" | "PUT";
  /** The path after /internal/v1/jobs/:job_id/. */
  path: RegExp;
  scope: Scope;
}

export const CHANNEL_ROUTES: readonly ChannelRoute[] = [
  { method: "POST", path: /^progress$/, scope: "report" },
  { method: "POST", path: /^probe$/, scope: "report" },
  { method: "POST", path: /^complete$/, scope: "report" },
  { method: "POST", path: /^fail$/, scope: "report" },
  { method: "POST", path: /^interrupted$/, scope: "report" },
  { method: "PUT", path: /^clips\/[^/]+$/, scope: "upload" },
  { method: "PUT", path: /^clips\/[^/]+\/thumbnail$/, scope: "upload" },
  { method: "PUT", path: /^clips\/[^/]+\/captions\.(vtt|srt)$/, scope: "upload" },
  { method: "PUT", path: /^transcript$/, scope: "upload" },
  { method: "POST", path: /^transcribe$/, scope: "transcribe" },
  { method: "GET", path: /^source$/, scope: "source" },
  { method: "POST", path: /^similarity$/, scope: "similarity" },
  { method: "POST", path: /^translate$/, scope: "translate" },
  { method: "GET", path: /^logo$/, scope: "logo" },
  { method: "GET", path: /^cookies$/, scope: "cookies" },
  { method: "POST", path: /^judge$/, scope: "judge" },
];

/** The scopes a job's token carries. */
export function grantedScopes(job: Pick<Job, "uploadId" | "videoType" | "config" | "videoUrl">): Scope[] {
  return (Object.keys(SCOPES) as Scope[]).filter((scope) => SCOPES[scope](job));
}

/** The scope a channel request needs, or null when no route of the channel is there. */
export function scopeOf(method: string, subpath: string): Scope | null {
  // Hono answers HEAD with the GET route.
  const wanted = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
  return CHANNEL_ROUTES.find((route) => route.method === wanted && route.path.test(subpath))?.scope ?? null;
}
