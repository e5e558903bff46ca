/**
 * The one thing these suites fake: the clip engine (a Container in production,
 * a separate process locally). Worker code and tests share one isolate, so a
 * spy on the global fetch sees every request the Worker sends to ENGINE_URL
 * (http://engine.test) and answers as the engine would; every other fetch
 * passes through untouched. The engine's side of direction 2 is played by
 * EngineClient, which calls the Worker's internal routes like the engine does.
 */
import { env, SELF } from "cloudflare:test";
import { vi, type MockInstance } from "vitest";
import type {
  CallbackAck,
  ClipReport,
  CompleteReport,
  FailReport,
  ProbeAck,
  ProbeReport,
  ProgressReport,
  StartJob,
} from "#contract";
import { ENGINE_SIGNATURE_HEADER, importVerifyKey, verifyEngineRequest, verifyKeyFor } from "#contract";

let verifyKey: Promise<CryptoKey> | undefined;

/** ENGINE_VERIFY_KEY as the engine gets it: the public half of the Worker's ENGINE_SIGNING_KEY. */
export function engineVerifyKey(): Promise<CryptoKey> {
  verifyKey ??= verifyKeyFor(env.ENGINE_SIGNING_KEY).then(importVerifyKey);
  return verifyKey;
}

/** How the real engine judges a signed request: "ok" once per signature, "replayed" after, "unsigned" when it does not verify. */
export type Verdict = "ok" | "replayed" | "unsigned";

/** The nonces accepted so far, as the engine's ledger keeps them (container/src/http/replay.ts). */
const seenNonces = new Set<string>();

export async function judgeAsEngine(header: string | null, request: { method: string; path: string; body: string }): Promise<Verdict> {
  const verified = await verifyEngineRequest(await engineVerifyKey(), header, request);
  if (!verified.ok) return "unsigned";
  if (seenNonces.has(verified.nonce)) return "replayed";
  seenNonces.add(verified.nonce);
  return "ok";
}

export const ENGINE_ORIGIN = "http://engine.test";

export interface EngineRequest {
  method: string;
  path: string;
  authorization: string | null;
  /** Whether the Engine-Signature verified with the Worker's public key, as the real engine checks. */
  signed: boolean;
  /** The real engine's verdict (a replay of an accepted request is refused). */
  verdict: Verdict;
  /** The Engine-Signature header as sent. */
  signature: string | null;
  body: string;
}

/** up: answers like a healthy engine; down: connection refused; broken: 500; busy: 503 (shutting down). */
export type EngineMode = "up" | "down" | "broken" | "busy";

let activeSpy: MockInstance<typeof fetch> | undefined;

export class FakeEngine {
  readonly requests: EngineRequest[] = [];
  mode: EngineMode = "up";
  /** Cancels fail as an unreachable engine's would (a stop that could not be delivered); everything else answers. */
  failCancels = false;
  private readonly running = new Set<string>();

  install(): void {
    // One fake at a time: restore a previous test's spy so pass-through reaches the real fetch.
    activeSpy?.mockRestore();
    const passThrough = globalThis.fetch.bind(globalThis);
    activeSpy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (!request.url.startsWith(`${ENGINE_ORIGIN}/`)) return passThrough(request);
      return this.answer(request);
    });
  }

  private async answer(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const body = await request.text();
    const signature = request.headers.get(ENGINE_SIGNATURE_HEADER);
    const verdict = await judgeAsEngine(signature, { method: request.method, path, body });
    const signed = verdict !== "unsigned";
    this.requests.push({
      method: request.method,
      path,
      authorization: request.headers.get("Authorization"),
      signed,
      verdict,
      signature,
      body,
    });
    if (this.mode === "down") throw new TypeError("fetch failed: connection refused");
    if (this.mode === "broken") return new Response("engine failed", { status: 500 });
    if (this.mode === "busy") return new Response("shutting down", { status: 503 });
    const recorded = this.requests.at(-1)!;
    // The real engine answers 401 to an unsigned or forged request, 409 to a replayed one, and starts nothing.
    if (request.method === "POST" && !signed) return new Response("unauthorized", { status: 401 });
    if (request.method === "POST" && verdict === "replayed") return Response.json({ code: "replayed" }, { status: 409 });
    if (request.method === "POST" && path === "/jobs") {
      const start = JSON.parse(recorded.body) as StartJob;
      // The real engine keys a job by its id and a clip edit by job id and edit id (container/src/clip-edit).
      const key = start.clip_edit ? `${start.job_id}/${start.clip_edit.edit_id}` : start.job_id;
      const started = !this.running.has(key);
      this.running.add(key);
      return Response.json({ job_id: start.job_id, started }, { status: 202 });
    }
    const cancel = /^\/jobs\/([^/]+)\/cancel$/.exec(path);
    if (request.method === "POST" && cancel && this.failCancels) throw new TypeError("fetch failed: connection refused");
    if (request.method === "POST" && cancel) {
      this.running.delete(cancel[1]!);
      return new Response(null, { status: 202 });
    }
    return new Response("not found", { status: 404 });
  }

  /** Every StartJob the Worker sent for this job, oldest first. */
  starts(jobId: string): StartJob[] {
    return this.requests
      .filter((r) => r.method === "POST" && r.path === "/jobs")
      .map((r) => JSON.parse(r.body) as StartJob)
      .filter((start) => start.job_id === jobId);
  }

  /** Every StartJob of a clip edit of this job (StartJob.clip_edit set), oldest first. */
  editStarts(jobId: string): (StartJob & { clip_edit: NonNullable<StartJob["clip_edit"]> })[] {
    return this.starts(jobId).filter((start): start is StartJob & { clip_edit: NonNullable<StartJob["clip_edit"]> } => start.clip_edit !== undefined);
  }

  cancels(jobId: string): EngineRequest[] {
    return this.requests.filter((r) => r.method === "POST" && r.path === `/jobs/${jobId}/cancel`);
  }
}

/** Polls `probe` until it returns a value (not undefined) or the deadline passes (a budget for a stuck run, under the 60 s test timeout: a loaded machine is slow, not wrong). */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The engine's calls back into the Worker for one job. */
export class EngineClient {
  constructor(
    readonly jobId: string,
    readonly token: string,
    private readonly callbackBase: string,
  ) {}

  static from(start: StartJob): EngineClient {
    // The engine's callback origin comes from its own environment (CALLBACK_BASE), not from StartJob.
    return new EngineClient(start.job_id, start.token, env.CALLBACK_BASE);
  }

  url(suffix: string): string {
    return `${this.callbackBase}/internal/v1/jobs/${this.jobId}/${suffix}`;
  }

  send(suffix: string, init: RequestInit & { token?: string } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${init.token ?? this.token}`);
    return SELF.fetch(this.url(suffix), { ...init, headers });
  }

  postJson(suffix: string, body: unknown, token?: string): Promise<Response> {
    return this.send(suffix, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      token,
    });
  }

  progress(report: ProgressReport): Promise<Response> {
    return this.postJson("progress", report);
  }

  async probe(report: Partial<ProbeReport> & Pick<ProbeReport, "duration_seconds">): Promise<ProbeAck> {
    const res = await this.postJson("probe", {
      title: "Test source",
      width: 640,
      height: 360,
      format: "mp4",
      size_bytes: 1000,
      ...report,
    });
    if (res.status !== 200) throw new Error(`probe answered ${res.status}: ${await res.text()}`);
    return res.json<ProbeAck>();
  }

  upload(suffix: string, bytes: Uint8Array, contentType: string): Promise<Response> {
    return this.send(suffix, {
      method: "PUT",
      headers: { "Content-Type": contentType, "Content-Length": String(bytes.byteLength) },
      body: bytes,
    });
  }

  /** Uploads clip `index` and its thumbnail; returns the bytes sent. */
  async uploadClip(index: number, size = 2048): Promise<{ clip: Uint8Array; thumbnail: Uint8Array }> {
    const clip = patternBytes(size, index + 1);
    const thumbnail = patternBytes(256, index + 101);
    const a = await this.upload(`clips/${index}`, clip, "video/mp4");
    if (a.status !== 200) throw new Error(`clip upload answered ${a.status}: ${await a.text()}`);
    const b = await this.upload(`clips/${index}/thumbnail`, thumbnail, "image/jpeg");
    if (b.status !== 200) throw new Error(`thumbnail upload answered ${b.status}: ${await b.text()}`);
    return { clip, thumbnail };
  }

  /** The speech fields default to "no transcript", as the engine reports a source without speech. */
  complete(report: StubCompleteReport): Promise<Response> {
    const full: CompleteReport = { ...report, transcript: report.transcript ?? null, transcript_unavailable_reason: report.transcript_unavailable_reason ?? null, translation: report.translation ?? null, judgement: report.judgement ?? null, chapters: report.chapters ?? [] };
    return this.postJson("complete", full);
  }

  fail(report: FailReport): Promise<Response> {
    return this.postJson("fail", report);
  }
}

export type StubCompleteReport = Omit<CompleteReport, "transcript" | "transcript_unavailable_reason" | "translation" | "judgement" | "chapters"> &
  Partial<Pick<CompleteReport, "transcript" | "transcript_unavailable_reason" | "translation" | "judgement" | "chapters">>;

export function clipReport(index: number, overrides: Partial<ClipReport> = {}): ClipReport {
  return {
    index,
    start_seconds: index * 20,
    end_seconds: index * 20 + 15.5,
    score: 0.9 - index * 0.1,
    reasons: ["speech_density", "loudness_peak"],
    width: 1080,
    height: 1920,
    reframe: "center",
    faces_count: 0,
    text: null,
    title: null,
    captions_burned: false,
    sidecars: false,
    prompt_match: null,
    removed: [],
    zooms: [],
    scores: null,
    judged_by: "signals",
    description: null,
    hashtags: [],
    ...overrides,
  };
}

/** Deterministic, distinguishable bytes (so a test can tell which upload it reads back). */
export function patternBytes(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed * 17) & 0xff;
  return bytes;
}

export async function expectAck(res: Response): Promise<void> {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`expected 200 ack, got ${res.status}: ${text}`);
  const body = JSON.parse(text) as CallbackAck;
  if (body.ok !== true) throw new Error(`unexpected ack ${text}`);
}
