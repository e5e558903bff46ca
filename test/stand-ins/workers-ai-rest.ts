/**
 * A stand-in for Workers AI's REST API, as a fetch handler: what the
 * Worker's REST transport (src/ai/rest.ts) talks to in the Workers pool, and
 * what the Node server (scripts/local-stack/ai-stand-in.ts) serves to a local
 * stack. It speaks the documented shapes
 * (developers.cloudflare.com/workers-ai/get-started/rest-api, .../platform/errors):
 *
 *   POST {base}/accounts/{account_id}/ai/run/{model}   Authorization: Bearer {token}
 *   body: the model's JSON input   ->   {result, success, errors: [{code, message}], messages}
 *
 * Failures as the API answers them: 401 with code 10000 for a missing or
 * wrong token, 400 with 5007 "No such model" for a model it has no handler
 * for, 404 with 7003 for a path that is no route, 400 for a body that is not
 * JSON, and whatever a test scripts with failNext (e.g. 429 3040 "Out of
 * capacity", 500, 503, or no answer at all).
 *
 * One handler per model; the defaults answer the three models the service
 * uses, reusing the Workers-pool stand-ins' answers: whisper-large-v3-turbo
 * speaks a script (the words a test put in the audio) over the chunk's
 * length, m2m100 uses the phrase book, bge-m3 the concept lexicon. A
 * text-generation handler is added with setHandler.
 */
import { inspectWav } from "../../src/engine/wav.ts";
import { whisperOutput, type SpokenWord } from "../worker/whisper-stand-in.ts";
import { M2M100StandIn, type PhraseBook } from "../worker/m2m100-stand-in.ts";
import { BgeM3StandIn } from "../worker/bge-m3-stand-in.ts";
import { answerJudgement, type TextGenerationInput } from "./text-generation.ts";

export const WHISPER = "@cf/openai/whisper-large-v3-turbo";
export const M2M100 = "@cf/meta/m2m100-1.2b";
export const BGE_M3 = "@cf/baai/bge-m3";
export const JUDGE_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

export interface ApiError {
  code: number;
  message: string;
}

/** Thrown by a handler: the API answers `status` with these errors. */
export class StandInFailure extends Error {
  constructor(
    readonly status: number,
    readonly errors: ApiError[],
  ) {
    super(errors.map((e) => `${e.code}: ${e.message}`).join("; "));
  }
}

export type ModelHandler = (input: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;

/** A scripted failure: an HTTP answer, or no answer until the client gives up. */
export type ScriptedFailure = { status: number; errors: ApiError[]; body?: string } | { hang: true };

/** The documented failures a test or a newcomer can ask for. */
export const FAILURES = {
  unauthorized: { status: 401, errors: [{ code: 10000, message: "Authentication error" }] },
  notFound: { status: 404, errors: [{ code: 7003, message: "No route for the URI" }] },
  rateLimited: { status: 429, errors: [{ code: 3040, message: "Out of capacity" }] },
  dailyLimit: { status: 429, errors: [{ code: 3036, message: "Account limited" }] },
  internal: { status: 500, errors: [{ code: 3001, message: "Unknown internal error" }] },
  unavailable: { status: 503, errors: [] },
} satisfies Record<string, ScriptedFailure>;

export interface RecordedRequest {
  model: string;
  accountId: string;
  authorization: string | null;
  input: unknown;
  status: number;
}

export interface StandInOptions {
  accountId: string;
  token: string;
  /** What whisper hears in every chunk: words spread over the chunk's length. */
  script?: string;
  phrases?: PhraseBook;
}

function envelope(status: number, result: unknown, errors: ApiError[] = []): Response {
  const success = status >= 200 && status < 300;
  return Response.json({ result: success ? result : null, success, errors, messages: [] }, { status });
}

function base64Bytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The script's words, evenly over `seconds`. */
export function spokenOver(script: string, seconds: number): SpokenWord[] {
  const words = script.split(/\s+/).filter((w) => w.length > 0);
  const step = words.length > 0 ? seconds / words.length : 0;
  return words.map((word, i) => ({ word, start: Math.round(i * step * 1000) / 1000, end: Math.round((i + 1) * step * 1000) / 1000 }));
}

export class WorkersAiRestStandIn {
  readonly requests: RecordedRequest[] = [];
  private readonly handlers = new Map<string, ModelHandler>();
  private readonly failures: { model: string | null; failure: ScriptedFailure }[] = [];
  script: string;
  /** Called with each request once answered (the CLI server logs them). */
  onRequest: (request: RecordedRequest) => void = () => {};

  constructor(private readonly options: StandInOptions) {
    this.script = options.script ?? "";
    const m2m100 = new M2M100StandIn(options.phrases ?? {});
    const bge = new BgeM3StandIn();
    this.setHandler(WHISPER, async (input) => {
      if (typeof input.audio !== "string" || input.audio === "") throw new StandInFailure(400, [{ code: 5006, message: "Error: required properties at '/' are 'audio'" }]);
      let bytes: Uint8Array;
      try {
        bytes = base64Bytes(input.audio);
      } catch {
        throw new StandInFailure(400, [{ code: 5004, message: "Invalid data type for base64 input: string" }]);
      }
      const wav = inspectWav(bytes);
      const seconds = "problem" in wav ? 0 : wav.durationSeconds;
      return whisperOutput(spokenOver(this.script, seconds), typeof input.language === "string" ? input.language : "en");
    });
    this.setHandler(M2M100, (input, signal) => asFailure(() => m2m100.run(M2M100, input, { signal })));
    this.setHandler(BGE_M3, (input) => asFailure(() => bge.run(BGE_M3, input)));
    // The default judge: a text-generation model answering in its documented shape (text-generation.ts).
    this.setHandler(JUDGE_MODEL, (input) => asFailure(() => Promise.resolve(answerJudgement(JUDGE_MODEL, input as TextGenerationInput))));
  }

  setHandler(model: string, handler: ModelHandler): void {
    this.handlers.set(model, handler);
  }

  /** The next `count` requests (for `model`, or any model when null) get this failure. */
  failNext(failure: ScriptedFailure, count = 1, model: string | null = null): void {
    for (let i = 0; i < count; i += 1) this.failures.push({ model, failure });
  }

  requestsFor(model: string): RecordedRequest[] {
    return this.requests.filter((r) => r.model === model);
  }

  /** The REST API: pass as the transport's fetcher, or serve it over HTTP. */
  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const match = /\/accounts\/([^/]+)\/ai\/run\/(.+)$/.exec(new URL(request.url).pathname);
    if (request.method !== "POST" || !match) return envelope(404, null, FAILURES.notFound.errors);
    const accountId = decodeURIComponent(match[1]!);
    const model = match[2]!.split("/").map(decodeURIComponent).join("/");
    const authorization = request.headers.get("Authorization");
    let body: unknown = null;
    const text = await request.text();
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const record: RecordedRequest = { model, accountId, authorization, input: body, status: 0 };
    this.requests.push(record);
    const answer = await this.answer(record, request.signal);
    record.status = answer.status;
    this.onRequest(record);
    return answer;
  };

  private async answer(record: RecordedRequest, signal: AbortSignal): Promise<Response> {
    if (record.authorization !== `Bearer ${this.options.token}` || record.accountId !== this.options.accountId) {
      return envelope(401, null, FAILURES.unauthorized.errors);
    }
    const handler = this.handlers.get(record.model);
    if (!handler) return envelope(400, null, [{ code: 5007, message: `No such model ${record.model} or task` }]);
    if (typeof record.input !== "object" || record.input === null || Array.isArray(record.input)) {
      return envelope(400, null, [{ code: 3003, message: "Request is missing headers or body: body" }]);
    }
    const scripted = this.failures.findIndex((f) => f.model === null || f.model === record.model);
    if (scripted >= 0) {
      const failure = this.failures.splice(scripted, 1)[0]!.failure;
      if ("hang" in failure) {
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new DOMException("The operation was aborted.", "AbortError"))));
      }
      if (failure.body !== undefined) return new Response(failure.body, { status: failure.status });
      return envelope(failure.status, null, failure.errors);
    }
    try {
      return envelope(200, await handler(record.input as Record<string, unknown>, signal));
    } catch (err) {
      if (err instanceof StandInFailure) return envelope(err.status, null, err.errors);
      return envelope(500, null, [{ code: 3001, message: err instanceof Error ? err.message : String(err) }]);
    }
  }
}

/** The pool stand-ins throw "code: message" as the binding does; over REST that is a 400 with that error. */
async function asFailure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const coded = /^(\d+): (.*)$/.exec(message);
    throw new StandInFailure(400, [{ code: coded ? Number(coded[1]) : 5006, message: coded ? coded[2]! : message }]);
  }
}
