/**
 * Generated bad input for the operator API (ADMIN_TOKEN) and the engine's
 * callback routes (per-job token): wrong and forged credentials, generated
 * bodies derived from the zod schemas, and odd indexes. Same oracle as the
 * other fuzz suites; accepted bodies must satisfy the contract.
 */
import fc from "fast-check";
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompleteReport, FailReport, ProbeReport, ProgressReport } from "#contract";
import { accountState } from "../../src/account/stub.ts";
import { signEngineToken } from "../../src/engine/token.ts";
import { silenceTimeoutSeconds } from "../../src/settings.ts";
import { arbitraryFromSchema, bodyFor, contentType, inputSchema, jsonValue, malformedBody, type RawBody } from "./fuzz/bodies.ts";
import { fuzzEndpoint, describeCase } from "./fuzz/property.ts";
import { fuzzAccounts, isJsonMediaType, parsedBody, pathSegment, type Caller, type FuzzAccounts, type FuzzRequest } from "./fuzz/requests.ts";
import { hostilePathPart, hostileString } from "./fuzz/strings.ts";
import { Tally } from "./fuzz/tally.ts";
import { WriteGuard } from "./fuzz/write-guard.ts";
import { FakeEngine } from "./engine-stub.ts";
import { startJob } from "./jobs-helpers.ts";
import { api } from "./helpers.ts";
import { fuzzRuns } from "./fuzz/runs.ts";

const RUNS = fuzzRuns(2_000);
// A budget for a stuck run, not a speed target: 2,000 requests take far longer on a loaded machine than on a quiet one.
const TIMEOUT_MS = 900_000;
const tally = new Tally();
let accounts: FuzzAccounts;
let engine: FakeEngine;
/** The job the engine is working on; replaced whenever a generated report ends it. */
let live: { jobId: string; token: string };
let otherToken: string;

beforeAll(async () => {
  engine = new FakeEngine();
  engine.install();
  accounts = await fuzzAccounts();
  live = await startLive(accounts.main);
  // Only its token is needed (a valid signature for another job). Ended now, before any guard watches: left
  // processing, the watchdog would fail it ENGINE_SILENCE_TIMEOUT_SECONDS later, in the middle of whichever
  // property runs then on a loaded machine, as a write no request made.
  const other = await startLive(accounts.other);
  otherToken = other.token;
  const canceled = await api(accounts.other, `/api/v1/jobs/${other.jobId}/cancel`, { method: "POST" });
  expect(canceled.status).toBe(200);
});

afterAll(() => tally.print("fuzz: operator API and engine channel"));

/** Submits and dispatches a job; the token is the one the Worker signed into StartJob. */
async function startLive(account: FuzzAccounts["main"]): Promise<{ jobId: string; token: string }> {
  const { jobId } = await startJob(account, engine);
  return { jobId, token: engine.starts(jobId).at(-1)!.token };
}

/** Replaces the live job once a generated report has ended it (checking first that nothing else was written). */
async function ensureLive(guard: WriteGuard): Promise<void> {
  if ((await jobStatus(live.jobId)) === "processing") return;
  await guard.check();
  live = await startLive(accounts.main);
  await guard.start();
}

/**
 * Before each request: the live job is there, and the stand-in engine gives its
 * sign of life as the real engine's heartbeat does (a report recorded in the
 * account's Durable Object, no D1 write), at a tenth of the silence timeout.
 * Most probe, complete and fail bodies are refused before they count as one,
 * so without it the watchdog would fail the live job
 * ENGINE_SILENCE_TIMEOUT_SECONDS after the last accepted report: on a loaded
 * machine in the middle of a property, a write no request made.
 */
let lastBeat = { jobId: "", atMs: 0 };
async function holdLive(guard: WriteGuard): Promise<void> {
  await ensureLive(guard);
  const silenceSeconds = silenceTimeoutSeconds(env);
  if (lastBeat.jobId === live.jobId && Date.now() - lastBeat.atMs < silenceSeconds * 100) return;
  await accountState(env, accounts.main.accountId).engineReport(live.jobId, {}, silenceSeconds);
  lastBeat = { jobId: live.jobId, atMs: Date.now() };
}

async function jobStatus(jobId: string): Promise<string | undefined> {
  return (await env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(jobId).first<{ status: string }>())?.status;
}

type TokenKind = "valid" | "other-job" | "expired" | "tampered" | "api-key" | "admin" | "none" | "garbage";

function tokenCaller(kind: TokenKind, token: string): Caller {
  const bearer = (value: string): Caller => ({ kind: kind === "valid" ? "valid" : "garbage", authorization: `Bearer ${value}` });
  switch (kind) {
    case "valid":
      return bearer(token);
    case "other-job":
      return bearer(otherToken);
    case "tampered":
      return bearer(token.slice(0, -2) + (token.endsWith("A") ? "BB" : "AA"));
    case "api-key":
      return bearer(accounts.main.apiKey);
    case "admin":
      return bearer(env.ADMIN_TOKEN);
    case "none":
      return { kind: "none", authorization: undefined };
    default:
      return bearer("x.y");
  }
}

const tokenKinds = fc.oneof(
  { weight: 8, arbitrary: fc.constant<TokenKind>("valid") },
  { weight: 1, arbitrary: fc.constantFrom<TokenKind>("other-job", "expired", "tampered", "api-key", "admin", "none", "garbage") },
);

/**
 * Report bodies: an accepted probe, complete or fail ends or changes the live
 * job (and a new one must be set up), so those lean towards invalid bodies.
 */
function reportBodies(route: string, schema: (typeof REPORTS)[keyof typeof REPORTS]) {
  const all = bodyFor(arbitraryFromSchema(inputSchema(schema)), 1);
  if (route === "progress") return bodyFor(arbitraryFromSchema(inputSchema(schema)), 4);
  return fc.oneof({ weight: 1, arbitrary: all }, { weight: 5, arbitrary: fc.oneof(malformedBody, jsonValue.map((v): RawBody => ({ kind: "random-json", payload: JSON.stringify(v) }))) });
}

const REPORTS = {
  progress: ProgressReport,
  probe: ProbeReport,
  complete: CompleteReport,
  fail: FailReport,
} as const;

describe("fuzz: engine callbacks", () => {
  for (const [route, schema] of Object.entries(REPORTS)) {
    it(`POST /internal/v1/jobs/{job_id}/${route}: ${RUNS} generated reports`, async () => {
      const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId], 200);
      const expiredFor = new Map<string, string>();
      await fuzzEndpoint(tally, {
        endpoint: `POST /internal/.../${route}`,
        op: { method: "post", path: null },
        runs: RUNS,
        guard,
        requests: fc
          .record({ token: tokenKinds, contentType, body: reportBodies(route, schema) })
          .map(({ token, ...rest }): FuzzRequest => ({ ...rest, method: "POST", target: `/internal/v1/jobs/@live/${route}`, caller: { kind: "garbage", authorization: token } })),
        prepare: async (req) => {
          await holdLive(guard);
          // Tokens are signed per job, so they are chosen once the live job is known.
          const kind = req.caller.authorization as TokenKind;
          let caller = tokenCaller(kind, live.token);
          if (kind === "expired") {
            const expired = expiredFor.get(live.jobId) ?? (await signEngineToken(env.CALLBACK_TOKEN_SECRET, live.jobId, ["report", "upload", "transcribe"], -60));
            expiredFor.set(live.jobId, expired);
            caller = { kind: "garbage", authorization: `Bearer ${expired}` };
          }
          return { ...req, caller, target: req.target.replace("@live", live.jobId) };
        },
        judge: async (req, { status, body }) => {
          const jobId = live.jobId;
          if (req.caller.kind !== "valid") return expect(status).toBe(401);
          const value = parsedBody(req.body);
          // The channel takes any JSON media type (application/json, application/*+json), as the engine's client is ours.
          const jsonType = req.contentType !== undefined && /^application\/([a-z.-]+\+)?json\s*(;|$)/i.test(req.contentType.trim());
          const valid = (isJsonMediaType(req.contentType) || jsonType) && schema.safeParse(value).success;
          if (status === 200) {
            // Only reports that satisfy the contract are ever accepted.
            expect(valid).toBe(true);
            if (route === "probe") expect(body).toMatchObject({ proceed: expect.any(Boolean), credits_reserved: expect.any(Number) });
            else expect(body).toEqual({ ok: true });
            // Probe, complete and fail move the account's credits too.
            await guard.accepted([jobId, accounts.main.accountId], describeCase(req));
          } else if (route === "progress" || route === "fail") {
            expect(valid).toBe(false);
          }
          // A complete report also needs its uploads; one that was refused is refused with 400.
          if (route === "complete" && valid && status !== 200) expect(status).toBe(400);
          await ensureLive(guard);
        },
      });
    }, TIMEOUT_MS);
  }

  it(`PUT /internal/v1/jobs/{job_id}/clips/{index}: ${RUNS} generated uploads`, async () => {
    const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId], 200);
    await fuzzEndpoint(tally, {
      endpoint: "PUT /internal/.../clips/{index}",
      op: { method: "put", path: null },
      runs: RUNS,
      guard,
      requests: fc
        .record({
          token: tokenKinds,
          index: fc.oneof(fc.integer({ min: -2, max: 22 }).map(String), hostilePathPart),
          thumbnail: fc.boolean(),
          contentType: fc.constantFrom(undefined, "video/mp4", "image/jpeg", "application/json"),
          bytes: fc.oneof(fc.uint8Array({ minLength: 0, maxLength: 64 }), fc.constant(undefined)),
        })
        .map(({ token, index, thumbnail, contentType: type, bytes }): FuzzRequest => ({
          method: "PUT",
          target: `/internal/v1/jobs/@live/clips/${index}${thumbnail ? "/thumbnail" : ""}`,
          caller: { kind: "garbage", authorization: token },
          contentType: type,
          body: { kind: bytes === undefined ? "none" : "binary", payload: bytes },
        })),
      prepare: async (req) => {
        await holdLive(guard);
        return { ...req, caller: tokenCaller(req.caller.authorization as TokenKind, live.token), target: req.target.replace("@live", live.jobId) };
      },
      judge: async (req, { status }) => {
        if (req.caller.kind !== "valid") return expect(status).toBe(401);
        // As routed: URL-parsed and percent-decoded ("%32" is index 2).
        const index = pathSegment(req.target, 6) ?? "";
        const indexOk = /^\d+$/.test(index) && Number(index) <= 19;
        const size = req.body.payload?.length ?? 0;
        if (status === 200) {
          expect(indexOk && size > 0).toBe(true);
          if (req.target.endsWith("/thumbnail")) {
            const stored = await env.UPLOADS.get(`staging/${live.jobId}/${Number(index)}.jpg`);
            expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(req.body.payload);
          } else {
            // A clip is staged as an incomplete upload (unreadable until completion); its marker names it.
            const marker = await env.UPLOADS.head(`staging/${live.jobId}/${Number(index)}.mp4`);
            expect(marker?.customMetadata).toMatchObject({ job_id: live.jobId, size: String(size) });
            expect(await env.CLIPS.head(marker!.customMetadata!.key!)).toBeNull();
          }
          await guard.accepted([live.jobId], describeCase(req));
        } else if (indexOk && size > 0) {
          throw new Error(`a valid upload was refused with ${status}`);
        }
      },
    });
  }, TIMEOUT_MS);
});

describe("fuzz: engine channel, speech uploads", () => {
  const VTT = "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello there\n";
  const SRT = "1\n00:00:00,000 --> 00:00:01,000\nHello there\n";
  const transcriptBodies = bodyFor(
    fc.record({
      source: fc.oneof(fc.constantFrom("workers_ai", "subtitle_track", "platform_subtitles", "captions_url"), hostileString),
      language: fc.oneof(fc.constant(null), fc.constantFrom("en", "de"), hostileString),
      words: fc.array(fc.record({ text: hostileString, start: fc.double({ min: -5, max: 100, noNaN: true }), end: fc.double({ min: -5, max: 100, noNaN: true }) }), { maxLength: 4 }),
      sentences: fc.array(fc.record({ text: hostileString, start: fc.integer({ min: 0, max: 50 }), end: fc.integer({ min: 50, max: 99 }) }), { maxLength: 3 }),
    }),
    2,
  );

  /** The independent reading of the transcript route's rules (contract Transcript, 0 <= start <= end). */
  function validTranscript(value: unknown): boolean {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
    const t = value as Record<string, unknown>;
    const spans = (list: unknown, needsText: boolean) =>
      Array.isArray(list) &&
      list.every((item) => {
        const span = item as Record<string, unknown>;
        return (
          typeof item === "object" && item !== null && !Array.isArray(item) && (!needsText || typeof span.text === "string") &&
          typeof span.start === "number" && typeof span.end === "number" && Number.isFinite(span.start) && Number.isFinite(span.end) &&
          span.start >= 0 && span.end >= span.start && (span.speaker === undefined || typeof span.speaker === "string")
        );
      });
    return (
      ["workers_ai", "subtitle_track", "platform_subtitles", "captions_url"].includes(t.source as string) &&
      (t.language === null || typeof t.language === "string") &&
      spans(t.words, true) &&
      spans(t.sentences, true)
    );
  }

  it(`PUT /internal/v1/jobs/{job_id}/transcript and .../captions.vtt|srt: ${RUNS} generated uploads`, async () => {
    const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId], 200);
    const captionBodies = fc.oneof(
      fc.constantFrom(VTT, SRT, "", "WEBVTT", "hello", "1\n00:00:00,000 --> x"),
      hostileString,
      fc.uint8Array({ maxLength: 32 }).map((bytes) => String.fromCharCode(...bytes)),
    );
    await fuzzEndpoint(tally, {
      endpoint: "PUT /internal/.../transcript | captions",
      op: { method: "put", path: null },
      runs: RUNS,
      guard,
      requests: fc
        .record({
          token: tokenKinds,
          route: fc.constantFrom("transcript", "vtt", "srt"),
          index: fc.oneof(fc.integer({ min: -1, max: 21 }).map(String), hostilePathPart),
          contentType: fc.constantFrom(undefined, "application/json", "text/vtt", "application/x-subrip", "text/plain"),
          transcript: fc.oneof(transcriptBodies, malformedBody),
          captions: captionBodies,
        })
        .map(({ token, route, index, contentType: type, transcript, captions }): FuzzRequest => ({
          method: "PUT",
          target: route === "transcript" ? "/internal/v1/jobs/@live/transcript" : `/internal/v1/jobs/@live/clips/${index}/captions.${route}`,
          caller: { kind: "garbage", authorization: token },
          contentType: type,
          body: route === "transcript" ? transcript : { kind: "random-json", payload: captions },
        })),
      prepare: async (req) => {
        await holdLive(guard);
        return { ...req, caller: tokenCaller(req.caller.authorization as TokenKind, live.token), target: req.target.replace("@live", live.jobId) };
      },
      judge: async (req, { status }) => {
        if (req.caller.kind !== "valid") return expect(status).toBe(401);
        const media = (req.contentType ?? "").split(";")[0]!.trim().toLowerCase();
        if (req.target.endsWith("/transcript")) {
          const ok = media === "application/json" && isJsonMediaType(req.contentType) && validTranscript(parsedBody(req.body));
          if (status === 200) {
            expect(ok).toBe(true);
            const stored = await env.UPLOADS.get(`transcripts/${live.jobId}.json`);
            expect(await stored!.json()).toMatchObject({ source: (parsedBody(req.body) as { source: string }).source });
            await guard.accepted([live.jobId], describeCase(req));
          } else if (ok) {
            throw new Error(`a valid transcript was refused with ${status}`);
          }
          return;
        }
        // A generated index may carry "?" or "#": the request then reached another route (a clip upload) or none.
        const routed = /\/captions\.(vtt|srt)$/.exec(new URL(req.target, "http://worker.test").pathname);
        if (!routed) {
          if (status === 200) await guard.accepted([live.jobId], describeCase(req));
          return;
        }
        const format = routed[1] === "vtt" ? "vtt" : "srt";
        const index = pathSegment(req.target, 6) ?? "";
        const text = typeof req.body.payload === "string" ? req.body.payload : "";
        const ok =
          /^\d+$/.test(index) && Number(index) <= 19 &&
          media === (format === "vtt" ? "text/vtt" : "application/x-subrip") &&
          (text === VTT || text === SRT) && (format === "vtt" ? text === VTT : text === SRT);
        if (status === 200) {
          expect(/^\d+$/.test(index) && Number(index) <= 19).toBe(true);
          const stored = await env.UPLOADS.get(`staging/${live.jobId}/${Number(index)}.${format}`);
          // The channel decodes the body as UTF-8 and drops a leading byte-order mark (speech-storage.test.ts).
          expect(await stored!.text()).toBe(text.replace(/^\ufeff/, ""));
          await guard.accepted([live.jobId], describeCase(req));
        } else if (ok) {
          throw new Error(`a valid ${format} upload was refused with ${status}`);
        }
      },
    });
  }, TIMEOUT_MS);
});

describe("fuzz: operator API", () => {
  it(`the other operator routes (accounts, keys, plans): ${RUNS} generated requests`, async () => {
    const target = await fuzzAccounts();
    const routes = fc.constantFrom<[string, string]>(
      ["GET", "/admin/v1/plans"],
      ["POST", "/admin/v1/accounts"],
      ["GET", "/admin/v1/accounts/@id"],
      ["GET", "/admin/v1/accounts/@id/keys"],
      ["POST", "/admin/v1/accounts/@id/keys"],
      ["GET", "/admin/v1/keys/@key"],
      ["POST", "/admin/v1/keys/@key/revoke"],
      ["DELETE", "/admin/v1/keys/@key"],
    );
    const ids = fc.oneof({ weight: 3, arbitrary: fc.constant("@real") }, { weight: 2, arbitrary: hostilePathPart });
    const accountBodies = bodyFor(fc.record({ email: fc.oneof(fc.emailAddress(), hostileString), plan: fc.oneof(fc.constantFrom("free", "pro", "unmetered"), hostileString) }, { requiredKeys: ["email"] }), 2);
    await fuzzEndpoint(tally, {
      endpoint: "admin accounts / keys / plans",
      op: { method: "get", path: null },
      runs: RUNS,
      requests: fc
        .record({
          route: routes,
          id: ids,
          caller: fc.oneof(
            { weight: 5, arbitrary: fc.constant<Caller>({ kind: "valid", authorization: `Bearer ${env.ADMIN_TOKEN}` }) },
            { weight: 1, arbitrary: fc.constantFrom<Caller>({ kind: "garbage", authorization: `Bearer ${target.main.apiKey}` }, { kind: "none", authorization: undefined }, { kind: "garbage", authorization: `Bearer ${env.ADMIN_TOKEN.slice(0, -1)}` }) },
          ),
          contentType,
          body: accountBodies,
        })
        .map(({ route: [method, path], id, caller, contentType: type, body }): FuzzRequest => ({
          method,
          // Key routes never get the real key id (a revoke would end the suite's own key); other ids are hostile or the account's.
          target: path.replace("@id", id === "@real" ? target.other.accountId : id).replace("@key", id === "@real" ? "key_000000000000000000" : id),
          caller,
          contentType: type,
          body,
        })),
      judge: (req, { status, body }) => {
        if (req.caller.kind !== "valid") return expect(status).toBe(401);
        if (status !== 201 || !req.target.endsWith("/admin/v1/accounts")) return;
        // An account is created only from a well-formed email and a known plan (default free).
        const value = parsedBody(req.body) as { email: unknown; plan?: unknown };
        expect(typeof value.email === "string" && /^[^@\s]+@[^@\s]+$/.test(value.email)).toBe(true);
        expect([undefined, "free", "pro", "unmetered"]).toContain(value.plan);
        expect((body as { api_key: string }).api_key).toMatch(/^ck_live_/);
      },
    });
  }, TIMEOUT_MS);

  it(`POST /admin/v1/accounts/{id}/credits and PUT .../plan: ${RUNS} generated requests`, async () => {
    // Accounts of their own: the callback properties' jobs may still be settled by the watchdog meanwhile.
    const own = await fuzzAccounts();
    const guard = new WriteGuard([own.main.accountId, own.other.accountId], 500);
    const adminCaller = fc.oneof(
      { weight: 6, arbitrary: fc.constant<Caller>({ kind: "valid", authorization: `Bearer ${env.ADMIN_TOKEN}` }) },
      { weight: 1, arbitrary: fc.constantFrom<Caller>({ kind: "api-key" as Caller["kind"], authorization: `Bearer ${own.main.apiKey}` }, { kind: "none", authorization: undefined }, { kind: "garbage", authorization: `Bearer ${env.ADMIN_TOKEN}x` }, { kind: "garbage", authorization: `Basic ${env.ADMIN_TOKEN}` }) },
    );
    const creditBodies = bodyFor(arbitraryFromSchema({ type: "object", properties: { credits: { type: "integer", minimum: 1, maximum: 1000 }, reason: { type: "string", maxLength: 40 } }, required: ["credits"] }), 2);
    const planBodies = bodyFor(fc.record({ plan: fc.oneof(fc.constantFrom("unmetered", "pro"), hostileString) }), 2);
    await fuzzEndpoint(tally, {
      endpoint: "admin credits / plan",
      op: { method: "post", path: null },
      runs: RUNS,
      guard,
      requests: fc
        .record({
          caller: adminCaller,
          account: fc.oneof({ weight: 4, arbitrary: fc.constant("@main") }, { weight: 1, arbitrary: hostilePathPart }),
          which: fc.constantFrom("credits", "plan"),
          contentType,
          credits: creditBodies,
          plan: planBodies,
        })
        .map(({ caller, account, which, contentType: type, credits, plan }): FuzzRequest => ({
          method: which === "credits" ? "POST" : "PUT",
          target: `/admin/v1/accounts/${account}/${which}`,
          caller,
          contentType: type,
          body: which === "credits" ? credits : plan,
        })),
      prepare: async (req) => ({ ...req, target: req.target.replace("@main", own.main.accountId) }),
      judge: async (req, { status, body }) => {
        if (req.caller.kind !== "valid") return expect(status).toBe(401);
        if (status !== 200) return;
        // Accepted: the target is the account, and the body is what the operator API documents.
        expect(req.target).toContain(own.main.accountId);
        const value = parsedBody(req.body) as Record<string, unknown>;
        expect(isJsonMediaType(req.contentType)).toBe(true);
        if (req.method === "POST") {
          expect(Number.isInteger(value.credits) && (value.credits as number) >= 1 && (value.credits as number) <= 100_000_000).toBe(true);
          expect(value.reason === undefined || (typeof value.reason === "string" && value.reason.length <= 500)).toBe(true);
        } else {
          expect(["free", "pro", "unmetered"]).toContain(value.plan);
          expect((body as { plan: string }).plan).toBe(value.plan);
        }
        await guard.accepted([own.main.accountId], describeCase(req));
      },
    });
  }, TIMEOUT_MS);
});
