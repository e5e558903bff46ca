/**
 * Editing one clip of a completed job, as the Worker hands it to the engine.
 *
 * A StartJob that carries `clip_edit` renders that one clip again instead of
 * running a whole job. The Worker owns the transcript and the user's
 * corrections, so it sends the span's words already corrected (source
 * times) and the effective configuration (the job's, with the edit's
 * overrides) in StartJob.config. The engine fetches the source as for a job
 * (StartJob.video_url / source), renders the span with those words as its
 * transcript (speech-to-text only of `transcribe`, no judgement), uploads the clip,
 * thumbnail and caption sidecars on the usual callback routes under
 * `clip_edit.index`, and completes with a CompleteReport of exactly one clip
 * at that index and no transcript. Its callbacks use the edit's own token;
 * the Worker tells an edit's callbacks from the job's by that token.
 */
import { z } from "zod";

/** A job has at most this many clips, its own and the ones cut after it. */
export const MAX_CLIPS_PER_JOB = 20;

/** Most words one clip's edit carries (a 180 s clip of fast speech is about 600). */
export const MAX_EDIT_WORDS = 2000;

/** A corrected caption word: 1-60 characters, no line breaks. */
export const MAX_EDIT_WORD_CHARS = 60;

/** Most uncovered parts one edit asks the engine to transcribe. */
export const MAX_TRANSCRIBE_SPANS = 8;

export const EditWord = z.object({
  text: z.string().min(1).max(MAX_EDIT_WORD_CHARS),
  /** Source seconds. */
  start: z.number().nonnegative(),
  end: z.number().nonnegative(),
  speaker: z.string().optional(),
});
export type EditWord = z.infer<typeof EditWord>;

export const EDIT_ID_PATTERN = /^edit_[A-Za-z0-9]{16,40}$/;

export const ClipEdit = z.object({
  /** The edit's id; the engine runs one edit per (job_id, edit_id). */
  edit_id: z.string().regex(EDIT_ID_PATTERN),
  /** The clip's index in the job (an existing clip, or the next index for a new one). */
  index: z.number().int().min(0).max(MAX_CLIPS_PER_JOB - 1),
  /** The version the render will publish (the job's own render is 1). */
  version: z.number().int().min(1),
  start_seconds: z.number().nonnegative(),
  end_seconds: z.number().positive(),
  /** The span's words with the user's corrections applied; [] when the job has no transcript. */
  words: z.array(EditWord).max(MAX_EDIT_WORDS),
  /**
   * Parts of the span the job's transcript does not cover (source seconds;
   * outside a job's time_range): the engine transcribes them through the
   * channel's transcribe route and captions them too. Absent or []: the
   * words cover the whole span.
   */
  transcribe: z.array(z.object({ start: z.number().nonnegative(), end: z.number().nonnegative() })).max(MAX_TRANSCRIBE_SPANS).optional(),
  /** The clip's title; null: the engine chooses one from the words, as for a job. */
  title: z.string().min(1).max(120).nullable(),
});
export type ClipEdit = z.infer<typeof ClipEdit>;
