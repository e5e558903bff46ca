/**
 * What a job's stages share (stages/index.ts runs them in order): the job
 * and the engine's means, set when the job starts, then what each stage
 * learns for the ones after it. A stage reads an earlier stage's result with
 * `need`, so running stages out of order fails loudly instead of reading
 * nothing.
 */
import type { ClipFraming, StartJob, Transcript } from "#contract";
import type { EarlyAnalysis } from "../analyse/early.ts";
import type { SpeechPcm } from "../analyse/measure.ts";
import type { ScoredWindow } from "../analyse/select.ts";
import type { SpeechModelLoad } from "../analyse/speech-model.ts";
import type { JobBrand } from "../brand/prepare.ts";
import type { ClipCaptions } from "../captions/index.ts";
import type { ProgressTracker } from "../channel/progress.ts";
import type { JobReporter } from "../channel/report.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import type { JudgeStageResult } from "../judge/stage.ts";
import type { ReframePlan } from "../reframe/plan.ts";
import type { EngineConfig } from "../shared/config.ts";
import type { Candidate, SourceInfo } from "../shared/types.ts";
import type { WorkDir } from "../shared/workdir.ts";
import type { AddressPolicy, Resolver } from "../source/address-policy.ts";
import type { FetchedSource } from "../source/index.ts";
import type { Interval, RemovalPlan } from "../steer/removals.ts";
import type { SourceWindow } from "../steer/time-range.ts";
import type { Cue } from "../transcript/cues.ts";
import type { StageClock } from "./stage-clock.ts";

export interface JobDeps {
  runner: FfmpegRunner;
  config: EngineConfig;
  /** Tests only: override the address rule and DNS for source downloads. */
  policy?: AddressPolicy;
  resolver?: Resolver;
  /** Tests only: the speech model (default: the process's, see analyse/speech-model.ts). */
  speechModel?: () => Promise<SpeechModelLoad>;
}

/** What the analysis learned, in source seconds (a time_range's window mapped back). */
export interface JobAnalysis {
  /** The part of the source analysed: the whole of it, or the job's time_range. */
  window: SourceWindow;
  wholeSource: boolean;
  /** The analysis's picks, best first, at most max_clips. */
  analysed: Candidate[];
  speechSpans: Interval[] | null;
  /** Moments of vocal emphasis, in source seconds (punch-in zooms). */
  emphasis: Interval[];
  quiet: Interval[] | null;
  keyframes: number[] | null;
  /** The analysis's PCM, for the transcript's chunks (whole sources only); removed once they are cut. */
  speechPcm: SpeechPcm | null;
  /** Every window the strategy scored: a prompt's ranking, and the pool judgement chooses among. */
  windows: ScoredWindow[];
  /** When the analysis's measuring began (during the download when it streamed), for its timing. */
  startedAt: number | null;
}

/** One rendered clip waiting for (or in) its upload. */
export interface RenderedClip {
  index: number;
  candidate: Candidate;
  videoPath: string;
  thumbnailPath: string;
  /** Writes the thumbnail (from the source or from the rendered clip), run beside the clip's upload. */
  makeThumbnail: (signal: AbortSignal) => Promise<void>;
  width: number;
  height: number;
  plan: ReframePlan;
  captions: ClipCaptions;
  /** What was cut out, and the match with the job's prompt (null without one). */
  removal: RemovalPlan;
  promptMatch: number | null;
  /** The crop as reported for editor exports. */
  framing: ClipFraming;
  /** Where the picture pushed in (zoom: emphasis), in source seconds. */
  zooms: { start_seconds: number; end_seconds: number }[];
}

export interface JobContext {
  readonly job: StartJob;
  readonly jobId: string;
  readonly deps: JobDeps;
  readonly runner: FfmpegRunner;
  readonly config: EngineConfig;
  /** The job's signal: a cancel, the Worker's 409 or a shutdown aborts it. */
  readonly signal: AbortSignal;
  /** The channel to the Worker (callbacks). */
  readonly reporter: JobReporter;
  readonly progress: ProgressTracker;
  readonly clock: StageClock;
  readonly workDir: WorkDir;
  /** " (WebAssembly ffmpeg, slow)" on that backend, else "": said in the steps it slows. */
  readonly backendNote: string;
  /** The speech model's load, begun with the job so it overlaps the download. */
  readonly speechLoad: Promise<SpeechModelLoad>;

  /** The analysis measuring the source as it arrives, when it can (download). */
  early: EarlyAnalysis | null;
  /** The downloaded source (download). */
  fetched?: FetchedSource;
  /** The cues of the job's captions_url, checked before any work is charged (captions-url). */
  captionsUrlCues: Cue[] | null;
  /** What probing learned (probe). */
  source?: SourceInfo;
  /** The speech model, null without audio (speech-model). */
  speech?: SpeechModelLoad | null;
  analysis?: JobAnalysis;
  /** The transcript inside the analysed window, and why there is none (transcript; the upload may drop it). */
  transcript: Transcript | null;
  transcriptReason: string | null;
  /** The clips to render, best first, and each one's match with the prompt (candidates, then judge). */
  candidates?: Candidate[];
  promptMatches: number[];
  judged?: JudgeStageResult;
  brand?: JobBrand;
  /** The clips rendered and stored, in index order (clips). */
  rendered?: RenderedClip[];
}

/** An earlier stage's result; its absence is a stage run out of order. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`job stage order: ${what} is not known yet`);
  return value;
}
