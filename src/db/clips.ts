/** Every SQL statement on the `clips` table. */
import { ClipFraming, ClipScores, type JudgedBy, type REFRAME_USED, type RemovedSpan, type ZoomSpan } from "#contract";

export type ClipReframe = (typeof REFRAME_USED)[number];

export interface Clip {
  jobId: string;
  index: number;
  objectKey: string;
  thumbnailKey: string;
  startSeconds: number;
  endSeconds: number;
  score: number;
  reasons: string[];
  width: number;
  height: number;
  /** What the crop followed: faces, activity or center. */
  reframe: ClipReframe;
  facesCount: number;
  /** The words spoken inside the clip; null without a transcript. */
  text: string | null;
  title: string | null;
  captionsBurned: boolean;
  /** WebVTT and SRT files were uploaded next to the clip. */
  sidecars: boolean;
  /** 0-1 match with the job's prompt; null without a prompt. */
  promptMatch: number | null;
  /** Pauses and fillers cut out of the clip, in source seconds. */
  removed: RemovedSpan[];
  /** Where the picture pushed in (configuration zoom: emphasis), in source seconds; [] without zooms. */
  zooms: ZoomSpan[];
  /** The rendered clip's real length; null: endSeconds - startSeconds. */
  durationSeconds: number | null;
  /** The published sidecars' keys (null without sidecars, and for clips published under the older layout, next to the clip). */
  vttKey: string | null;
  srtKey: string | null;
  /** How the clip was cropped from its source; null from an engine that did not report it. */
  framing: ClipFraming | null;
  /** The model's sub-scores; null when signals alone judged the clip (and for clips stored before judgement). */
  scores: ClipScores | null;
  judgedBy: JudgedBy;
  /** The post (docs/judgement.md): description and hashtags; the title is `title`. */
  description: string | null;
  hashtags: string[];
  /** 1 for the job's own render; each published edit adds one (docs/editing.md). */
  version: number;
  /** The per-clip overrides of the job's configuration it was rendered with. */
  overrides: Record<string, unknown>;
  /** Caption corrections it carries, by the word's source start time. */
  corrections: StoredCorrection[];
}

/** A caption word correction as stored: the word that starts at `start` (source seconds) reads `text`. */
export interface StoredCorrection {
  start: number;
  text: string;
}

interface ClipRow {
  job_id: string;
  idx: number;
  object_key: string;
  thumbnail_key: string;
  start_seconds: number;
  end_seconds: number;
  score: number;
  reasons_json: string;
  width: number;
  height: number;
  reframe: string;
  faces_count: number;
  text: string | null;
  title: string | null;
  captions_burned: number;
  sidecars: number;
  prompt_match: number | null;
  removed_json: string | null;
  zooms_json?: string | null;
  duration_seconds: number | null;
  vtt_key: string | null;
  srt_key: string | null;
  framing_json?: string | null;
  scores_json?: string | null;
  judged_by?: string | null;
  description?: string | null;
  hashtags_json?: string | null;
  version?: number | null;
  overrides_json?: string | null;
  corrections_json?: string | null;
}

/** Written only from a ClipReport that passed the contract schema; parsed again so a stored value is typed. */
function scoresOf(row: ClipRow): ClipScores | null {
  if (!row.scores_json) return null;
  const parsed = ClipScores.safeParse(JSON.parse(row.scores_json));
  return parsed.success ? parsed.data : null;
}

function toClip(row: ClipRow): Clip {
  return {
    jobId: row.job_id,
    index: row.idx,
    objectKey: row.object_key,
    thumbnailKey: row.thumbnail_key,
    startSeconds: row.start_seconds,
    endSeconds: row.end_seconds,
    score: row.score,
    reasons: JSON.parse(row.reasons_json) as string[],
    width: row.width,
    height: row.height,
    // Written only from a ClipReport that passed the contract schema.
    reframe: row.reframe as ClipReframe,
    facesCount: row.faces_count,
    text: row.text,
    title: row.title,
    captionsBurned: row.captions_burned === 1,
    sidecars: row.sidecars === 1,
    promptMatch: row.prompt_match ?? null,
    // Written only from a ClipReport that passed the contract schema.
    removed: JSON.parse(row.removed_json ?? "[]") as RemovedSpan[],
    // Written only from a ClipReport that passed the contract schema.
    zooms: JSON.parse(row.zooms_json ?? "[]") as ZoomSpan[],
    durationSeconds: row.duration_seconds ?? null,
    vttKey: row.vtt_key ?? null,
    srtKey: row.srt_key ?? null,
    framing: parseFraming(row.framing_json ?? null),
    scores: scoresOf(row),
    judgedBy: row.judged_by === "model" ? "model" : "signals",
    description: row.description ?? null,
    hashtags: JSON.parse(row.hashtags_json ?? "[]") as string[],
    version: row.version ?? 1,
    // Written only by the edit service from validated bodies.
    overrides: JSON.parse(row.overrides_json ?? "{}") as Record<string, unknown>,
    corrections: JSON.parse(row.corrections_json ?? "[]") as StoredCorrection[],
  };
}

/** Written only from a ClipReport that passed the contract schema; anything else reads as unknown framing. */
function parseFraming(json: string | null): ClipFraming | null {
  if (json === null) return null;
  const parsed = ClipFraming.safeParse(JSON.parse(json));
  return parsed.success ? parsed.data : null;
}

/** The columns a clip's render fills, in the order clipRowValues binds them (?1..?27). */
const CLIP_ROW_COLUMNS = `job_id, idx, object_key, thumbnail_key, start_seconds, end_seconds, score, reasons_json, width, height,
  reframe, faces_count, text, title, captions_burned, sidecars, vtt_key, srt_key, prompt_match, removed_json, duration_seconds, framing_json,
  scores_json, judged_by, description, hashtags_json, zooms_json`;

function clipRowValues(clip: Clip): (string | number | null)[] {
  return [
    clip.jobId,
    clip.index,
    clip.objectKey,
    clip.thumbnailKey,
    clip.startSeconds,
    clip.endSeconds,
    clip.score,
    JSON.stringify(clip.reasons),
    clip.width,
    clip.height,
    clip.reframe,
    clip.facesCount,
    clip.text,
    clip.title,
    clip.captionsBurned ? 1 : 0,
    clip.sidecars ? 1 : 0,
    clip.vttKey,
    clip.srtKey,
    clip.promptMatch,
    JSON.stringify(clip.removed),
    clip.durationSeconds,
    clip.framing === null ? null : JSON.stringify(clip.framing),
    clip.scores ? JSON.stringify(clip.scores) : null,
    clip.judgedBy,
    clip.description,
    JSON.stringify(clip.hashtags),
    JSON.stringify(clip.zooms),
  ];
}

/**
 * Writes one clip row, only while the job is still processing; meant to run
 * in the completion batch before the job's own guarded transition.
 */
export function insertClipWhileProcessing(db: D1Database, clip: Clip): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR REPLACE INTO clips (${CLIP_ROW_COLUMNS})
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27
       WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1 AND status = 'processing')`,
    )
    .bind(...clipRowValues(clip));
}

/** Clips of one job, best (index 0) first. */
export async function listClips(db: D1Database, jobId: string): Promise<Clip[]> {
  const { results } = await db.prepare(`SELECT * FROM clips WHERE job_id = ? ORDER BY idx`).bind(jobId).all<ClipRow>();
  return results.map(toClip);
}

/** Clips of several jobs at once (a list page), grouped by job id. */
export async function listClipsOfJobs(db: D1Database, jobIds: string[]): Promise<Map<string, Clip[]>> {
  const byJob = new Map<string, Clip[]>();
  if (jobIds.length === 0) return byJob;
  const { results } = await db
    .prepare(`SELECT * FROM clips WHERE job_id IN (${jobIds.map(() => "?").join(", ")}) ORDER BY job_id, idx`)
    .bind(...jobIds)
    .all<ClipRow>();
  for (const clip of results.map(toClip)) {
    const list = byJob.get(clip.jobId) ?? [];
    list.push(clip);
    byJob.set(clip.jobId, list);
  }
  return byJob;
}

export function deleteClipsOfJob(db: D1Database, jobId: string): D1PreparedStatement {
  return db.prepare(`DELETE FROM clips WHERE job_id = ?`).bind(jobId);
}

/**
 * A published edit's clip row (docs/editing.md): the whole row replaced by
 * the new version, only by the batch that published `editId` with `eventId`
 * (after the edit's own statements).
 */
export function writeEditedClip(db: D1Database, clip: Clip, editId: string, eventId: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR REPLACE INTO clips (${CLIP_ROW_COLUMNS}, version, overrides_json, corrections_json)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30
       WHERE EXISTS (SELECT 1 FROM clip_edits WHERE id = ?31 AND status = 'published' AND event_id = ?32)`,
    )
    .bind(
      ...clipRowValues(clip),
      clip.version,
      JSON.stringify(clip.overrides),
      JSON.stringify(clip.corrections),
      editId,
      eventId,
    );
}
