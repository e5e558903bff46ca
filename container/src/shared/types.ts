/** Types shared inside the engine, between the pipeline stages. */
import type { ClipScores } from "#contract";

/** One subtitle stream of the source (SourceInfo.subtitleStreams). */
export interface SubtitleStreamInfo {
  index: number;
  codec_name?: string;
  tags?: Record<string, string>;
}

/** What probing learned about a downloaded source. */
export interface SourceInfo {
  path: string;
  sizeBytes: number;
  durationSeconds: number;
  /** ffprobe's format_name, checked against the allow-list. */
  format: string;
  title: string;
  /** The stored picture's size; `rotation` says whether the decoded picture is turned (render/geometry.ts's uprightSize). */
  width: number;
  height: number;
  /** Degrees of the container's display rotation (ffmpeg decodes the picture turned by it); absent: 0. */
  rotation?: number;
  fps: number;
  hasAudio: boolean;
  /**
   * The source's subtitle streams as the probe listed them (absolute stream
   * index, codec, language tag), so the transcript's subtitle-track step needs
   * no ffprobe of its own; absent: that step probes the file itself.
   */
  subtitleStreams?: SubtitleStreamInfo[];
  /** Seconds of the first video frame (often 0); cut points are relative to it. */
  startTime: number;
  /**
   * Seconds from the container's start to the first audio stream's (its
   * start_time less the format's; absent when either is unknown). The
   * analysis's PCM counts from the audio's first sample and a seek counts
   * from the container's start: the two agree only when this is 0.
   */
  audioLeadSeconds?: number;
  /**
   * Analysis only (time_range, steer/time-range.ts): the passes seek to this
   * many source seconds and read durationSeconds from there; absent: 0.
   */
  seekSeconds?: number;
}

/** A crop window in source pixels, constant over [fromSeconds, toSeconds). */
export interface CropSegment {
  fromSeconds: number;
  toSeconds: number;
  /** Centre of the crop window as a fraction of the source width/height (0-1). */
  centerX: number;
  centerY: number;
}

/** A chosen moment, best first. Times are in source seconds. */
export interface Candidate {
  start: number;
  end: number;
  /** 0-1. */
  score: number;
  /** Short names of the signals that chose it, e.g. "speech_density". */
  reasons: string[];
  /** For reframe=auto: one crop position per scene inside the clip. */
  crop?: CropSegment[];
  /** What a language model made of it (judge/, docs/judgement.md); absent: the signals alone judged it. */
  judged?: Judged;
}

/** A model's verdict on one clip, every part checked against its bounds. */
export interface Judged {
  scores: ClipScores;
  /** The post; null or empty where the model gave nothing usable. */
  title: string | null;
  description: string | null;
  hashtags: string[];
  /** Up to three words or phrases of the clip to emphasise in its captions. */
  emphasis: string[];
}

/** Progress callback for one stage: fraction of that stage done, 0-1. */
export type StageProgress = (fraction: number) => void;
