/**
 * The one fake of the speech suites: a stand-in for the Workers AI binding
 * (env.AI) that answers `@cf/openai/whisper-large-v3-turbo` in the model's
 * documented output shape (workers-types Ai_Cf_Openai_Whisper_Large_V3_Turbo_Output:
 * text, word_count, segments[].words[{word,start,end}] with the leading
 * spaces Whisper emits, transcription_info, vtt) and fails the way the
 * binding does: by throwing (e.g. "3040: Capacity temporarily exceeded"), or
 * by not answering until the caller's signal aborts.
 */

export interface SpokenWord {
  word: string;
  start: number;
  end: number;
}

export type Outcome =
  | { kind: "answer"; words: SpokenWord[]; language?: string; segmentWords?: boolean }
  | { kind: "raw"; output: unknown }
  | { kind: "throw"; message: string }
  | { kind: "hang" };

export interface RecordedCall {
  model: string;
  audio: Uint8Array;
  inputs: Record<string, unknown>;
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function vttClock(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2): string => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor((ms % 3_600_000) / 60_000))}:${pad(Math.floor((ms % 60_000) / 1000))}.${pad(ms % 1000, 3)}`;
}

/** The documented output for `words` spoken in one segment. */
export function whisperOutput(words: SpokenWord[], language = "en", segmentWords = true) {
  const text = words.map((w) => w.word.trim()).join(" ");
  const start = words[0]?.start ?? 0;
  const end = words.at(-1)?.end ?? 0;
  return {
    text,
    word_count: words.length,
    transcription_info: { language, language_probability: 0.98, duration: end, duration_after_vad: end - start },
    segments: words.length
      ? [
          {
            start,
            end,
            text,
            temperature: 0,
            avg_logprob: -0.21,
            compression_ratio: 1.3,
            no_speech_prob: 0.01,
            ...(segmentWords ? { words: words.map((w) => ({ word: ` ${w.word.trim()}`, start: w.start, end: w.end })) } : {}),
          },
        ]
      : [],
    vtt: `WEBVTT\n\n${vttClock(start)} --> ${vttClock(end)}\n${text}\n`,
  };
}

export class WhisperStandIn {
  readonly calls: RecordedCall[] = [];
  /** Outcomes in call order; the last one repeats. */
  constructor(private readonly outcomes: Outcome[]) {}

  async run(model: string, inputs: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown> {
    const audio = typeof inputs.audio === "string" ? fromBase64(inputs.audio) : new Uint8Array(0);
    this.calls.push({ model, audio, inputs });
    if (model !== "@cf/openai/whisper-large-v3-turbo") throw new Error(`5007: No such model ${model}`);
    const outcome = this.outcomes[Math.min(this.calls.length - 1, this.outcomes.length - 1)]!;
    switch (outcome.kind) {
      case "answer":
        return whisperOutput(outcome.words, outcome.language, outcome.segmentWords ?? true);
      case "raw":
        return outcome.output;
      case "throw":
        throw new Error(outcome.message);
      case "hang":
        return new Promise((_, reject) => {
          options?.signal?.addEventListener("abort", () => reject(new DOMException("The operation was aborted.", "AbortError")));
        });
    }
  }

  /** As the Worker sees it: an Ai binding or an AiRunner (generic, so Node code needs no Workers types). */
  binding<T>(): T {
    return this as unknown as T;
  }
}

/** A RIFF/WAVE file: PCM s16le, `seconds` long, a quiet tone so the bytes are not all zero. */
export function makeWav(seconds: number, options: { sampleRate?: number; channels?: number; bits?: number } = {}): Uint8Array {
  const sampleRate = options.sampleRate ?? 16_000;
  const channels = options.channels ?? 1;
  const bits = options.bits ?? 16;
  const frames = Math.round(seconds * sampleRate);
  const dataBytes = frames * channels * (bits / 8);
  const bytes = new Uint8Array(44 + dataBytes);
  const view = new DataView(bytes.buffer);
  const ascii = (offset: number, text: string): void => {
    for (let i = 0; i < text.length; i += 1) view.setUint8(offset + i, text.charCodeAt(i));
  };
  ascii(0, "RIFF");
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * (bits / 8), true);
  view.setUint16(32, channels * (bits / 8), true);
  view.setUint16(34, bits, true);
  ascii(36, "data");
  view.setUint32(40, dataBytes, true);
  if (bits === 16) {
    for (let i = 0; i < frames * channels; i += 1) view.setInt16(44 + i * 2, Math.round(3000 * Math.sin((i * 2 * Math.PI * 220) / sampleRate)), true);
  }
  return bytes;
}
