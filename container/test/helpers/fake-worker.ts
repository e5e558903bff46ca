import { createWriteStream } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { CALLBACK_PREFIX, CHUNK_START_HEADER, type ProbeAck } from "#contract";

/**
 * A real HTTP server standing in for the Worker's internal callback routes:
 * it checks the bearer token, records every call in order and stores uploads
 * on disk so tests can probe them with ffprobe.
 */
export interface RecordedCall {
  jobId: string;
  /** progress, probe, complete, fail, interrupted, clip, thumbnail, captions_vtt, captions_srt, transcript, transcribe, translate, judge, logo */
  kind: string;
  index?: number;
  body?: unknown;
  bytes?: number;
  file?: string;
  contentType?: string;
  at: number;
  /** When the answer went out (after any `holdAnswer`). */
  answeredAt?: number;
  /** transcribe: the engine closed the request before it was answered (it stopped the chunk). */
  abandoned?: boolean;
}

export interface TranscribeAnswer {
  status: number;
  body: unknown;
}

export interface FakeWorkerBehaviour {
  probeAck?: (jobId: string) => ProbeAck;
  /** Return a status to answer instead of 200 (e.g. 409, 503); undefined answers normally. */
  /** A status to answer instead (409 as job_not_active), or a problem with its own code. */
  override?: (call: { jobId: string; kind: string; count: number }) => number | { status: number; code: string } | undefined;
  /**
   * The speech-to-text route. Default: 503 transcription_unavailable, as the
   * Worker answers without an AI binding (local development).
   */
  transcribe?: (call: { jobId: string; startSeconds: number; wav: Buffer }) => TranscribeAnswer | Promise<TranscribeAnswer>;
  /**
   * The translation route. Default: 503 translation_unavailable, as
   * the Worker answers without an AI binding (local development).
   */
  translate?: (call: { jobId: string; body: unknown }) => Promise<{ status: number; body: unknown }>;
  /**
   * The judgement route (docs/judgement.md). Default: what the Worker answers
   * without an AI binding: 200, judged by signals, saying so.
   */
  judge?: (call: { jobId: string; body: unknown }) => Promise<{ status: number; body: unknown }>;
  /** The logo route: the image and its type, or none (404). */
  logo?: (jobId: string) => { bytes: Buffer; contentType: string } | null;
  /**
   * Holds the answer after the body arrived until the promise settles (a slow store, e.g. R2 across the
   * world): tests hold it until an event they need to see happen while the call waits, not for a time.
   */
  holdAnswer?: (call: RecordedCall) => Promise<void> | undefined;
}

export interface FakeWorker {
  base: string;
  calls: RecordedCall[];
  callsFor(jobId: string, kind?: string): RecordedCall[];
  behaviour: FakeWorkerBehaviour;
  unauthorized: number;
  /** transcribe requests open now (arrived, neither answered nor closed by the engine), and the most ever open at once. */
  transcribeOpen: number;
  transcribeMostOpen: number;
  /** Resolves once no transcribe request is open (at once when none is). */
  transcribeIdle(): Promise<void>;
  /** Starts the "most open at once" count again from the requests open now (one test's count). */
  resetTranscribeMostOpen(): void;
  close(): Promise<void>;
}

export async function startFakeWorker(tokens: Map<string, string>, uploadDir: string): Promise<FakeWorker> {
  const calls: RecordedCall[] = [];
  const counts = new Map<string, number>();
  const state = { unauthorized: 0, transcribeOpen: 0, transcribeMostOpen: 0 };
  let idleWaiters: (() => void)[] = [];
  const transcribeClosed = () => {
    state.transcribeOpen -= 1;
    if (state.transcribeOpen > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };
  const behaviour: FakeWorkerBehaviour = {};
  const route = new RegExp(`^${CALLBACK_PREFIX}/([^/]+)/(progress|probe|complete|fail|interrupted|transcript|transcribe|translate|judge|logo|clips/(\\d+)(/thumbnail|/captions\\.vtt|/captions\\.srt)?)$`);

  const server = http.createServer((req, res) => {
    void (async () => {
      const match = route.exec(req.url ?? "");
      if (!match?.[1] || !match[2]) {
        res.writeHead(404).end();
        return;
      }
      const jobId = match[1];
      if (req.headers.authorization !== `Bearer ${tokens.get(jobId) ?? "-"}`) {
        state.unauthorized += 1;
        req.resume();
        res.writeHead(401).end();
        return;
      }
      const CLIP_KINDS: Record<string, string> = { "/thumbnail": "thumbnail", "/captions.vtt": "captions_vtt", "/captions.srt": "captions_srt" };
      const kind = match[3] !== undefined ? (match[4] ? CLIP_KINDS[match[4]]! : "clip") : match[2];
      const key = `${jobId}:${kind}`;
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      const overridden = behaviour.override?.({ jobId, kind, count });
      if (overridden !== undefined) {
        req.resume();
        const status = typeof overridden === "number" ? overridden : overridden.status;
        const code = typeof overridden === "number" ? (status === 409 ? "job_not_active" : undefined) : overridden.code;
        const body = code ? JSON.stringify({ code, status }) : "{}";
        res.writeHead(status, { "content-type": code ? "application/problem+json" : "application/json" }).end(body);
        return;
      }
      const call: RecordedCall = { jobId, kind, at: Date.now(), contentType: req.headers["content-type"] };
      const EXTENSIONS: Record<string, string> = { clip: "mp4", thumbnail: "jpg", captions_vtt: "vtt", captions_srt: "srt" };
      if (kind === "transcribe") {
        // Open from its arrival until the answer is written (before the engine can see it) or the engine closes it.
        state.transcribeOpen += 1;
        state.transcribeMostOpen = Math.max(state.transcribeMostOpen, state.transcribeOpen);
        let open = true;
        const settle = (abandoned: boolean) => {
          if (!open) return;
          open = false;
          if (abandoned) call.abandoned = true;
          transcribeClosed();
        };
        res.on("close", () => settle(true));
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const wav = Buffer.concat(chunks);
        const startSeconds = Number(req.headers[CHUNK_START_HEADER.toLowerCase()]);
        Object.assign(call, { bytes: wav.length, body: { startSeconds } });
        calls.push(call);
        const answer = (await behaviour.transcribe?.({ jobId, startSeconds, wav })) ?? {
          status: 503,
          body: { type: "about:blank", title: "Speech-to-text is not available", status: 503, code: "transcription_unavailable" },
        };
        if (res.destroyed) return;
        call.answeredAt = Date.now();
        settle(false);
        const type = answer.status === 200 ? "application/json" : "application/problem+json";
        res.writeHead(answer.status, { "content-type": type }).end(JSON.stringify(answer.body));
        return;
      }
      if (kind === "translate") {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        call.body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        calls.push(call);
        const answer = (await behaviour.translate?.({ jobId, body: call.body })) ?? {
          status: 503,
          body: { type: "/docs/errors#translation_unavailable", title: "Translation unavailable", status: 503, code: "translation_unavailable" },
        };
        res.writeHead(answer.status, { "content-type": answer.status === 200 ? "application/json" : "application/problem+json" }).end(JSON.stringify(answer.body));
        return;
      }
      if (kind === "judge") {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        call.body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        calls.push(call);
        const answer = (await behaviour.judge?.({ jobId, body: call.body })) ?? {
          status: 200,
          body: { judged_by: "signals", model: null, fallback_reason: "No Workers AI is configured on this deployment.", verdicts: [], chapters: [], usage: { calls: 0, tokens_in: 0, tokens_out: 0 } },
        };
        res.writeHead(answer.status, { "content-type": answer.status === 200 ? "application/json" : "application/problem+json" }).end(JSON.stringify(answer.body));
        return;
      }
      if (kind === "logo") {
        req.resume();
        calls.push(call);
        const logo = behaviour.logo?.(jobId) ?? null;
        if (!logo) res.writeHead(404, { "content-type": "application/problem+json" }).end(JSON.stringify({ code: "not_found", status: 404 }));
        else res.writeHead(200, { "content-type": logo.contentType, "content-length": String(logo.bytes.length) }).end(logo.bytes);
        return;
      }
      if (EXTENSIONS[kind]) {
        const index = Number(match[3]);
        const file = path.join(uploadDir, `${jobId}-${index}.${EXTENSIONS[kind]}`);
        await pipeline(req, createWriteStream(file));
        Object.assign(call, { index, file, bytes: Number(req.headers["content-length"]) });
      } else {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        call.body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      }
      calls.push(call);
      await behaviour.holdAnswer?.(call);
      call.answeredAt = Date.now();
      const answer = kind === "probe" ? (behaviour.probeAck?.(jobId) ?? { proceed: true, credits_reserved: 1 }) : { ok: true };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    calls,
    callsFor: (jobId, kind) => calls.filter((c) => c.jobId === jobId && (kind === undefined || c.kind === kind)),
    behaviour,
    get unauthorized() {
      return state.unauthorized;
    },
    get transcribeOpen() {
      return state.transcribeOpen;
    },
    get transcribeMostOpen() {
      return state.transcribeMostOpen;
    },
    resetTranscribeMostOpen: () => {
      state.transcribeMostOpen = state.transcribeOpen;
    },
    transcribeIdle: () =>
      state.transcribeOpen === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            idleWaiters.push(resolve);
          }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
