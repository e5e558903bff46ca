/**
 * The /judge request (docs/judgement.md): each candidate with the transcript
 * sentences inside it (cut to the contract's caps), the job's language,
 * video type and prompt, and for a source longer than ten minutes the
 * sections to title as chapters.
 */
import {
  CHAPTERS_MIN_SOURCE_SECONDS,
  JUDGE_MAX_CANDIDATES,
  JUDGE_MAX_SECTION_CHARS,
  JUDGE_MAX_SECTIONS,
  JUDGE_MAX_SENTENCE_CHARS,
  JUDGE_MAX_SENTENCES,
  type JudgeCandidate,
  type JudgeRequest,
  type JudgeSection,
  type JudgeSentence,
  type StartJob,
  type Transcript,
} from "#contract";
import type { Candidate } from "../shared/types.ts";

/** Chapters are at least this long (a 40-minute source gets 8). */
export const SECTION_SECONDS = 300;

/** The transcript's sentences whose middle is inside [start, end), cut to the contract's caps. */
export function sentencesIn(transcript: Transcript, start: number, end: number): JudgeSentence[] {
  return transcript.sentences
    .filter((s) => (s.start + s.end) / 2 >= start && (s.start + s.end) / 2 < end && s.text.trim() !== "")
    .slice(0, JUDGE_MAX_SENTENCES)
    .map((s) => ({ start: Math.max(0, s.start), end: Math.max(0, s.end), text: Array.from(s.text.trim()).slice(0, JUDGE_MAX_SENTENCE_CHARS).join("") }));
}

/** One section per SECTION_SECONDS or more (at most JUDGE_MAX_SECTIONS), each starting on a sentence, with its first words. */
export function sectionsOf(transcript: Transcript, from: number, to: number): JudgeSection[] {
  const length = to - from;
  if (length <= CHAPTERS_MIN_SOURCE_SECONDS) return [];
  const step = Math.max(SECTION_SECONDS, length / JUDGE_MAX_SECTIONS);
  const sections: JudgeSection[] = [];
  for (let at = from; at < to - step / 2; at += step) {
    const first = transcript.sentences.findIndex((s) => s.start >= at - 1e-6 && s.start < Math.min(to, at + step));
    if (first < 0) continue;
    let text = "";
    for (let i = first; i < transcript.sentences.length && transcript.sentences[i]!.start < at + step; i++) {
      text = `${text} ${transcript.sentences[i]!.text.trim()}`.trim();
      if (text.length >= JUDGE_MAX_SECTION_CHARS) break;
    }
    if (text === "") continue;
    // The first chapter starts the video (as players expect of chapters).
    const start = sections.length === 0 ? from : transcript.sentences[first]!.start;
    sections.push({ id: sections.length, start, text: Array.from(text).slice(0, JUDGE_MAX_SECTION_CHARS).join("") });
  }
  return sections.slice(0, JUDGE_MAX_SECTIONS);
}

export interface BuiltRequest {
  request: JudgeRequest;
  /** Candidate by its id in the request. */
  byId: Map<number, Candidate>;
}

/** The request, or null when no candidate has a sentence to judge. */
export function judgeRequest(job: StartJob, pool: readonly Candidate[], transcript: Transcript, range: { from: number; to: number }, sourceSeconds: number): BuiltRequest | null {
  const byId = new Map<number, Candidate>();
  const candidates: JudgeCandidate[] = [];
  for (const candidate of pool.slice(0, JUDGE_MAX_CANDIDATES)) {
    const sentences = sentencesIn(transcript, candidate.start, candidate.end);
    if (sentences.length === 0) continue;
    const id = candidates.length;
    byId.set(id, candidate);
    candidates.push({ id, start: Math.max(0, candidate.start), end: candidate.end, signal_score: Math.min(1, Math.max(0, candidate.score)), sentences });
  }
  if (candidates.length === 0) return null;
  return {
    byId,
    request: {
      language: transcript.language,
      post_language: job.config.caption_language ?? null,
      video_type: job.video_type,
      prompt: job.config.prompt ?? null,
      clips_wanted: job.config.max_clips,
      source_duration_seconds: sourceSeconds,
      candidates,
      sections: sectionsOf(transcript, range.from, range.to),
    },
  };
}
