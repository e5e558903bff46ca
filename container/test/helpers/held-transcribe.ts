import type { FfmpegRunner, RunRequest, RunResult } from "../../src/ffmpeg/runner.ts";
import { JobReporter, type ReporterOptions, type TranscribeOutcome } from "../../src/channel/report.ts";
import type { TranscribeAnswer } from "./fake-worker.ts";
import { nativeRunner } from "./media.ts";

/**
 * Tools for tests of the speech stage's schedule that wait on events, never
 * on time: a count whose values can be awaited, the fake Worker's transcribe
 * answers held until the test releases them, the reporter's transcribe calls
 * counted on the engine's side, and ffmpeg extractions seen as they start
 * and end.
 */

/** A count that tests can wait on: `reach(n)` resolves once it is at least n. */
export class Count {
  value = 0;
  private waiters: { at: number; wake: () => void }[] = [];

  add(): void {
    this.value += 1;
    const ready = this.waiters.filter((w) => this.value >= w.at);
    this.waiters = this.waiters.filter((w) => this.value < w.at);
    for (const w of ready) w.wake();
  }

  reach(at: number): Promise<void> {
    if (this.value >= at) return Promise.resolve();
    return new Promise((wake) => this.waiters.push({ at, wake }));
  }
}

export interface HeldRequest {
  startSeconds: number;
  /** Seconds of audio in the WAV the engine sent. */
  seconds: number;
  answer(answer: TranscribeAnswer): void;
}

/**
 * The fake Worker's transcribe route, holding every answer until the test
 * gives it: `behaviour` goes into `worker.behaviour.transcribe`.
 */
export class HeldTranscribe {
  readonly requests: HeldRequest[] = [];
  readonly arrivals = new Count();

  constructor(private readonly onArrival?: (request: HeldRequest, held: HeldTranscribe) => void) {}

  readonly behaviour = ({ startSeconds, wav }: { startSeconds: number; wav: Buffer }): Promise<TranscribeAnswer> =>
    new Promise<TranscribeAnswer>((answer) => {
      const rate = wav.readUInt32LE(24);
      const channels = wav.readUInt16LE(22);
      const request: HeldRequest = { startSeconds, seconds: (wav.length - 44) / (rate * 2 * channels), answer };
      this.requests.push(request);
      this.arrivals.add();
      this.onArrival?.(request, this);
    });

  /** The request for the chunk starting at `startSeconds` (requests may arrive in any order). */
  at(startSeconds: number): HeldRequest {
    const found = this.requests.find((r) => Math.abs(r.startSeconds - startSeconds) < 0.0005);
    if (!found) throw new Error(`no transcribe request for the chunk at ${startSeconds} s`);
    return found;
  }
}

/** The real reporter, counting its transcribe calls in progress (the engine's side of "in flight"). */
export class CountingReporter extends JobReporter {
  open = 0;
  mostOpen = 0;

  constructor(opts: ReporterOptions) {
    super(opts);
  }

  override async transcribe(wavPath: string, chunkStartSeconds: number, stop?: AbortSignal): Promise<TranscribeOutcome> {
    this.open += 1;
    this.mostOpen = Math.max(this.mostOpen, this.open);
    try {
      return await super.transcribe(wavPath, chunkStartSeconds, stop);
    } finally {
      this.open -= 1;
    }
  }
}

export interface ExtractionEvents {
  /** Before chunk `index`'s extraction starts (it waits for the promise). */
  before?: (index: number) => Promise<void>;
  /** Right after its ffmpeg was started. */
  started?: (index: number) => void;
  /** Once it ended: exited (with its code), or stopped (the promise rejected). */
  ended?: (index: number, how: { exitCode: number } | { stopped: unknown }) => void;
}

const CHUNK_WAV = /speech-(\d+)\.wav$/;

/** The real native runner, telling the test about each chunk extraction (outputs named speech-N.wav). */
export function watchedRunner(events: ExtractionEvents): FfmpegRunner {
  const inner = nativeRunner();
  return {
    backend: inner.backend,
    maxSourceBytes: inner.maxSourceBytes,
    ffprobe: (req) => inner.ffprobe(req),
    ffmpeg: async (req: RunRequest): Promise<RunResult> => {
      const match = req.outputs.map((o) => CHUNK_WAV.exec(o)).find(Boolean);
      if (!match) return inner.ffmpeg(req);
      const index = Number(match[1]);
      await events.before?.(index);
      const running = inner.ffmpeg(req);
      running.then(
        (result) => events.ended?.(index, { exitCode: result.exitCode }),
        (error: unknown) => events.ended?.(index, { stopped: error }),
      );
      events.started?.(index);
      return running;
    },
  };
}
