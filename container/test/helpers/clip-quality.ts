/**
 * The clip-quality judge, shared by container/test/analyse/clip-quality.test.ts
 * and `npm run bench:quality`: runs the engine's analysis (and, with a
 * subtitle track, the transcript and sentence snapping exactly as a job does)
 * on a generated conversation and judges the clips against what was planted:
 *
 *   - every edge outside every sentence of every speaker (overlaps and short
 *     replies included) and outside every laugh;
 *   - every highlight (an emphatic exchange) inside a clip;
 *   - no clip sharing more than half of itself with another;
 *   - the music intro and outro inside no clip;
 *   - `pause_bounded` claimed only by clips whose edges are both in silence.
 */
import { stat } from "node:fs/promises";
import type { ClipConfig, Transcript, VideoType } from "#contract";
import type { Conversation, ConversationSpec, Interval } from "../../../test/media/conversation.ts";
import type { SpeechSourceSpec } from "../../../test/media/speech.ts";
import { analyse } from "../../src/analyse/index.ts";
import { SENTENCE_SNAPPED_TYPES, snapToSentences } from "../../src/analyse/sentence-cuts.ts";
import type { FfmpegRunner } from "../../src/ffmpeg/runner.ts";
import { probeSource } from "../../src/source/probe.ts";
import { buildTranscript, wordsFromCues } from "../../src/transcript/build.ts";
import { subtitleTrackCues } from "../../src/transcript/track.ts";
import type { Candidate, SourceInfo } from "../../src/shared/types.ts";

/** Three voices: a US man, a British woman, a Caribbean woman. */
export const THREE_VOICES = ["en-us", "en-gb+f3", "en-029+f2"] as const;

export interface QualityCase {
  name: string;
  /** What the case is about, for the figures. */
  about: string;
  spec: Omit<ConversationSpec, "outPath">;
  types: VideoType[];
  config: Partial<ClipConfig>;
}

/** The conversations judged: the two failures (overlaps with a track; no transcript over a music bed) and a long show. */
export function qualityCases(opts: { longMinutes: number; types?: VideoType[] }): QualityCase[] {
  const speechTypes: VideoType[] = opts.types ?? ["podcast", "general", "vlog", "lecture"];
  return [
    {
      name: "panel",
      about: "3 voices talking over each other, short replies, hesitations, 2 laughs, music intro and outro, subtitle track",
      spec: { speakers: THREE_VOICES, minutes: 5, introSeconds: 12, outroSeconds: 12, bedDb: 20, overlapShare: 0.3, backchannelShare: 0.15, hesitationShare: 0.4, highlights: 2, subtitleTrack: true, seed: 2501 },
      types: speechTypes,
      config: { min_clip_seconds: 15, max_clip_seconds: 45, max_clips: 5 },
    },
    {
      name: "interview",
      about: "2 voices over a quiet music bed (12 dB below), hesitations, no transcript",
      spec: { speakers: THREE_VOICES.slice(0, 2), minutes: 4, bedDb: 12, hesitationShare: 0.5, highlights: 2, seed: 2502 },
      types: opts.types ?? ["podcast", "general", "vlog"],
      config: { min_clip_seconds: 15, max_clip_seconds: 45, max_clips: 5 },
    },
    {
      name: "long",
      about: `${opts.longMinutes} minutes, 3 voices, overlaps, 5 laughs, music intro and outro, subtitle track`,
      spec: {
        speakers: THREE_VOICES, minutes: opts.longMinutes, introSeconds: 15, outroSeconds: 15, bedDb: 20, overlapShare: 0.25, backchannelShare: 0.1,
        hesitationShare: 0.3, highlights: 5, subtitleTrack: true, audioCodec: "flac", seed: 2503,
      },
      types: opts.types ?? ["podcast"],
      config: { min_clip_seconds: 15, max_clip_seconds: 60, max_clips: 5 },
    },
  ];
}

/** A vlog without speech: a still picture (no motion to lean on), scene changes, music with two loud swells. */
export const NO_SPEECH_VLOG: Omit<SpeechSourceSpec, "outPath"> = {
  sentences: [],
  minDurationSeconds: 60,
  bed: { kind: "music", gainDb: 0, swells: [{ start: 14, end: 18 }, { start: 38, end: 42 }] },
  video: { sceneChanges: [12, 30, 47], still: true },
  seed: 2504,
};

export interface Judgement {
  clips: number;
  edges: number;
  /** Edges inside a sentence (of any speaker) or a laugh, described. */
  edgesInSpeech: string[];
  highlights: number;
  highlightsCovered: number;
  /** The largest share of one clip that another clip also holds (0-1). */
  worstOverlap: number;
  /** Clips reaching into the music intro or outro, described. */
  musicInside: string[];
  /** Clips claiming pause_bounded with an edge in speech. */
  falsePauseClaims: number;
}

const within = (t: number, span: Interval) => t > span.start && t < span.end;
const fmt = (t: number) => t.toFixed(2);

export function judgeClips(conversation: Conversation, clips: Candidate[]): Judgement {
  const sounds = [
    ...conversation.sentences.map((s) => ({ ...s, label: `"${s.text}" (speaker ${s.speaker})` })),
    ...conversation.laughs.map((l) => ({ ...l, label: "laughter" })),
  ];
  const edgesInSpeech: string[] = [];
  let falsePauseClaims = 0;
  for (const clip of clips) {
    let inSpeech = false;
    for (const edge of [clip.start, clip.end]) {
      const hit = sounds.find((s) => within(edge, s));
      if (hit) {
        inSpeech = true;
        edgesInSpeech.push(`edge ${fmt(edge)} of clip ${fmt(clip.start)}-${fmt(clip.end)} inside ${fmt(hit.start)}-${fmt(hit.end)} ${hit.label}`);
      }
    }
    if (inSpeech && clip.reasons.includes("pause_bounded")) falsePauseClaims++;
  }
  let worstOverlap = 0;
  for (let i = 0; i < clips.length; i++) {
    for (let j = i + 1; j < clips.length; j++) {
      const a = clips[i]!;
      const b = clips[j]!;
      const shared = Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));
      worstOverlap = Math.max(worstOverlap, shared / Math.min(a.end - a.start, b.end - b.start));
    }
  }
  const musicInside: string[] = [];
  for (const clip of clips) {
    if (conversation.intro && clip.start < conversation.intro.end) musicInside.push(`clip ${fmt(clip.start)}-${fmt(clip.end)} starts in the intro (to ${fmt(conversation.intro.end)})`);
    if (conversation.outro && clip.end > conversation.outro.start) musicInside.push(`clip ${fmt(clip.start)}-${fmt(clip.end)} ends in the outro (from ${fmt(conversation.outro.start)})`);
  }
  const covered = conversation.highlights.filter((h) => clips.some((c) => c.start <= h.start && c.end >= h.end)).length;
  return {
    clips: clips.length,
    edges: clips.length * 2,
    edgesInSpeech,
    highlights: conversation.highlights.length,
    highlightsCovered: covered,
    worstOverlap,
    musicInside,
    falsePauseClaims,
  };
}

export async function probeFile(runner: FfmpegRunner, path: string): Promise<SourceInfo> {
  return probeSource({
    runner,
    path,
    sizeBytes: (await stat(path)).size,
    videoUrl: "https://media.test/conversation.mp4",
    platformTitle: null,
    maxSourceSeconds: 3 * 3600,
    signal: new AbortController().signal,
  });
}

/** The source's subtitle track as a transcript, as a job reads it (track.ts, then build.ts). */
export async function trackTranscript(runner: FfmpegRunner, source: SourceInfo, scratchPath: string): Promise<Transcript> {
  const track = await subtitleTrackCues(runner, source, scratchPath, new AbortController().signal);
  if (!track.found) throw new Error(`the generated source's subtitle track did not read: ${track.note}`);
  return buildTranscript("subtitle_track", track.found.language, wordsFromCues(track.found.cues, source.durationSeconds));
}

/** The analysis's clips as a job takes them (best first, at most max_clips), and where it heard no one. */
export async function analysedClips(runner: FfmpegRunner, source: SourceInfo, type: VideoType, config: ClipConfig): Promise<{ clips: Candidate[]; quiet: Interval[] | null }> {
  let quiet: Interval[] | null = null;
  const clips = await analyse(runner, source, type, config, { signal: new AbortController().signal, onProgress: () => {}, onQuiet: (q) => (quiet = q) });
  return { clips: clips.slice(0, config.max_clips), quiet };
}

/** With a transcript, a speech-led type's edges moved onto sentences where no one speaks, as job/run.ts does. */
export function withTranscript(analysed: { clips: Candidate[]; quiet: Interval[] | null }, type: VideoType, config: ClipConfig, transcript: Transcript, duration: number): Candidate[] {
  if (!SENTENCE_SNAPPED_TYPES.has(type)) return analysed.clips;
  return snapToSentences(analysed.clips, transcript, { min: config.min_clip_seconds, max: config.max_clip_seconds, duration }, analysed.quiet);
}

/** One line of figures per case and type, for the test's summary and the bench. */
export function figuresLine(name: string, type: VideoType, transcript: string, j: Judgement): Record<string, string | number> {
  return {
    case: name,
    type,
    transcript,
    clips: j.clips,
    "edges in speech": `${j.edgesInSpeech.length}/${j.edges}`,
    highlights: `${j.highlightsCovered}/${j.highlights}`,
    "worst overlap": `${Math.round(j.worstOverlap * 100)}%`,
    "music inside": j.musicInside.length,
    "false pause claims": j.falsePauseClaims,
  };
}
