/**
 * Generated bad input for the jobs resource (SPEC sections 4-6): submit,
 * status, list, cancel and delete, each with at least 2,000 generated
 * requests. Properties: never a 5xx; errors are documented problem+json;
 * successes match the served OpenAPI document; invalid data is never
 * accepted (and valid data is); rejected requests write nothing.
 */
import fc from "fast-check";
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PROMPT_CHARS, REMOVE_SILENCE_MODES, VIDEO_TYPES } from "#contract";
import { FakeEngine } from "./engine-stub.ts";
import { arbitraryFromSchema, bodyFor, contentType, inputSchema, jsonValue, type RawBody } from "./fuzz/bodies.ts";
import { send } from "./fuzz/invoke.ts";
import { describeCase, fuzzEndpoint } from "./fuzz/property.ts";
import { checkResponse, documentedRequestBody, type Operation } from "./fuzz/oracle.ts";
import type { TestAccount } from "./helpers.ts";
import { callers, fuzzAccounts, isBlankBody, pathSegment, payloadBytes, isJsonMediaType, parsedBody, toRequest, type Caller, type FuzzAccounts, type FuzzRequest } from "./fuzz/requests.ts";
import { hostilePathPart, hostileString } from "./fuzz/strings.ts";
import { Tally } from "./fuzz/tally.ts";
import { acceptableStoredUrl, anyVideoUrl, publicUrl } from "./fuzz/urls.ts";
import { WriteGuard } from "./fuzz/write-guard.ts";
import { fuzzParameters, fuzzRuns } from "./fuzz/runs.ts";

const RUNS = fuzzRuns(2_000);
// A budget for a stuck run, not a speed target: 2,000 requests take far longer on a loaded machine than on a quiet one.
const TIMEOUT_MS = 900_000;
const SAVED_CONFIG = "saved";
const tally = new Tally();
let accounts: FuzzAccounts;
/** Jobs of the main account that exist and are finished (canceled). */
const finishedJobs: string[] = [];
/** A job of the other account: the main key must see it as missing. */
let foreignJob: string;

async function call(endpoint: string, op: Operation, req: FuzzRequest): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await send(toRequest(req));
  tally.record(endpoint, res.status);
  const body = await checkResponse(res, op);
  return { status: res.status, body, headers: res.headers };
}

/** The account a caller acts for, or null when its key must be refused. */
function accountOf(caller: Caller): TestAccount | null {
  if (caller.kind === "valid") return accounts.main;
  if (caller.kind === "other-account") return accounts.other;
  return null;
}


async function submitValid(account = accounts.main): Promise<string> {
  const res = await send(
    toRequest({
      method: "POST",
      target: "/api/v1/jobs",
      caller: { kind: "valid", authorization: `Bearer ${account.apiKey}` },
      contentType: "application/json",
      body: { kind: "valid", payload: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "vlog" }) },
    }),
  );
  if (res.status !== 201) throw new Error(`setup submit answered ${res.status}: ${res.text}`);
  return (JSON.parse(res.text) as { job_id: string }).job_id;
}

async function cancel(jobId: string, account = accounts.main): Promise<void> {
  const res = await send(
    toRequest({ method: "POST", target: `/api/v1/jobs/${jobId}/cancel`, caller: { kind: "valid", authorization: `Bearer ${account.apiKey}` }, contentType: undefined, body: { kind: "none", payload: undefined } }),
  );
  if (res.status !== 200) throw new Error(`setup cancel answered ${res.status}: ${res.text}`);
}

/**
 * Fresh accounts per property: the write guard's snapshots cover the
 * accounts' rows, so they stay small when no property inherits another's jobs.
 */
async function freshAccounts(): Promise<void> {
  accounts = await fuzzAccounts();
  finishedJobs.length = 0;
  const put = await send(
    toRequest({ method: "PUT", target: `/api/v1/configs/${SAVED_CONFIG}`, caller: { kind: "valid", authorization: `Bearer ${accounts.main.apiKey}` }, contentType: "application/json", body: { kind: "valid", payload: "{}" } }),
  );
  expect(put.status).toBe(201);
  for (let i = 0; i < 3; i++) {
    const jobId = await submitValid();
    await cancel(jobId);
    finishedJobs.push(jobId);
  }
  foreignJob = await submitValid(accounts.other);
  await cancel(foreignJob, accounts.other);
}

beforeAll(() => {
  // The queue consumer and cancel talk to the engine; here it is the in-isolate fake.
  new FakeEngine().install();
});

afterAll(() => tally.print("fuzz: jobs resource (generated requests per endpoint, statuses seen)"));

/** Submission bodies: derived from SubmitJobBody as the served document describes it, with hostile URLs and config names mixed in. */
async function submitBodies(): Promise<fc.Arbitrary<RawBody>> {
  // URL submissions only: upload_id submissions have their own suite (uploads-jobs.test.ts).
  const body = await documentedRequestBody("post", "/api/v1/jobs");
  const urlProperties = Object.fromEntries(Object.entries(body.properties ?? {}).filter(([name]) => name !== "upload_id"));
  const documented = { ...body, properties: urlProperties, required: ["video_url", "video_type"] };
  const valid = arbitraryFromSchema(documented, {
    video_url: publicUrl,
    config_name: fc.constant(SAVED_CONFIG),
    captions_url: fc.option(publicUrl, { nil: null }),
    // Steering: mostly valid values, so accepted submissions carry them.
    prompt: fc.option(fc.string({ minLength: 1, maxLength: MAX_PROMPT_CHARS }).filter((t) => /\S/.test(t)), { nil: null }),
    time_range: fc.option(
      fc.record({ start_seconds: fc.integer({ min: 0, max: 3600 }), end_seconds: fc.integer({ min: 3615, max: MAX_SOURCE_SECONDS }) }),
      { nil: null },
    ),
  });
  const risky = arbitraryFromSchema(documented, {
    video_url: anyVideoUrl,
    video_type: fc.oneof(fc.constantFrom(...VIDEO_TYPES), hostileString),
    config_name: fc.oneof(fc.constantFrom(SAVED_CONFIG, "missing", ""), hostileString),
    captions_url: fc.oneof(anyVideoUrl, fc.constant(null), jsonValue),
    prompt: fc.oneof(fc.string({ maxLength: 600 }), fc.constant(null), jsonValue),
    time_range: fc.oneof(
      fc.record({ start_seconds: fc.double({ min: -10, max: 12_000, noNaN: true }), end_seconds: fc.double({ min: -10, max: 12_000, noNaN: true }) }),
      fc.constant(null),
      jsonValue,
    ),
  });
  return fc.oneof(bodyFor(valid, 2), risky.map((v): RawBody => ({ kind: "risky", payload: JSON.stringify(v) })));
}

/** MAX_SOURCE_SECONDS of the test Worker (wrangler.toml), the furthest a time_range may end. */
const MAX_SOURCE_SECONDS = 10_800;
/** min_clip_seconds of the defaults and of the saved configuration (saved as {}). */
const MIN_CLIP_SECONDS = 15;

/** The steering fields by their documented rules: true when valid or absent. */
function steeringIsValid(value: Record<string, unknown>): boolean {
  const { prompt, time_range: range, remove_silence: silence, remove_fillers: fillers } = value;
  if (prompt !== undefined && prompt !== null && (typeof prompt !== "string" || prompt.length > MAX_PROMPT_CHARS || !/\S/.test(prompt))) return false;
  if (silence !== undefined && !(REMOVE_SILENCE_MODES as readonly unknown[]).includes(silence)) return false;
  if (fillers !== undefined && typeof fillers !== "boolean") return false;
  if (range === undefined || range === null) return true;
  if (typeof range !== "object" || Array.isArray(range)) return false;
  const { start_seconds: start, end_seconds: end, ...others } = range as Record<string, unknown>;
  if (Object.keys(others).length > 0 || typeof start !== "number" || typeof end !== "number") return false;
  return start >= 0 && end > start && end <= MAX_SOURCE_SECONDS && end - start >= MIN_CLIP_SECONDS;
}

/** The independent judgement of a submission: must it be accepted (true), refused (false), or either (null)? */
function submissionVerdict(caller: Caller, type: string | undefined, body: RawBody, idempotencyKey: string | undefined): boolean | null {
  const account = accountOf(caller);
  if (account === null) return false;
  if (!isJsonMediaType(type)) return false;
  const value = parsedBody(body);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const {
    video_url: url,
    video_type: videoType,
    config_name: configName,
    captions_url: captionsUrl,
    prompt: _prompt,
    time_range: _range,
    remove_silence: _silence,
    remove_fillers: _fillers,
    ...rest
  } = value as Record<string, unknown>;
  if (typeof url !== "string" || typeof videoType !== "string" || !(VIDEO_TYPES as readonly string[]).includes(videoType)) return false;
  // Only the main account saved a configuration.
  if (configName !== undefined && configName !== null && (configName !== SAVED_CONFIG || account !== accounts.main)) return false;
  if (acceptableStoredUrl(url.trim()) !== null) return body.kind === "valid" ? null : false;
  // captions_url: optional, and when given it follows video_url's rules.
  if (captionsUrl !== undefined && captionsUrl !== null) {
    if (typeof captionsUrl !== "string") return false;
    if (acceptableStoredUrl(captionsUrl.trim()) !== null) return body.kind === "valid" ? null : false;
  }
  if (!steeringIsValid(value as Record<string, unknown>)) return false;
  // Unknown members are ignored (the schema is not strict); keys of odd length are refused.
  if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 255)) return false;
  return body.kind === "valid" && Object.keys(rest).length === 0 ? true : null;
}

/** What makes two submissions "the same request" for Idempotency-Key. */
function submittedFields(body: RawBody): string {
  const value = parsedBody(body) as Record<string, unknown>;
  const captions = value.captions_url ?? null;
  const steering = { prompt: value.prompt, time_range: value.time_range, remove_silence: value.remove_silence, remove_fillers: value.remove_fillers };
  const steered = Object.values(steering).some((v) => v !== undefined);
  return JSON.stringify([value.video_url, value.video_type, value.config_name ?? null, ...(captions === null ? [] : [captions]), ...(steered ? [steering] : [])]);
}

describe("fuzz: jobs", () => {
  it(`POST /api/v1/jobs: ${RUNS} generated submissions`, async () => {
    await freshAccounts();
    const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId]);
    await guard.start();
    const op: Operation = { method: "post", path: "/api/v1/jobs" };
    const firstJobOfKey = new Map<string, string>();
    const bodyOfKey = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(
        callers(accounts),
        contentType,
        await submitBodies(),
        fc.option(fc.oneof(hostileString.filter((s) => /^[\x20-\x7e]*$/.test(s)), fc.uuid()), { nil: undefined, freq: 4 }),
        async (caller, type, body, idempotencyKey) => {
          const req: FuzzRequest = {
            method: "POST",
            target: "/api/v1/jobs",
            caller,
            contentType: type,
            body,
            headers: idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey },
          };
          const { status, body: answer, headers } = await call("POST /api/v1/jobs", op, req);
          // Header values reach the service without surrounding whitespace (Fetch standard).
          const sentKey = idempotencyKey?.replace(/^[ \t]+|[ \t]+$/g, "");
          let verdict = submissionVerdict(caller, type, body, sentKey);
          const keyOwner = accountOf(caller);
          const usedKey = sentKey === undefined || keyOwner === null ? undefined : bodyOfKey.get(`${keyOwner.accountId}:${sentKey}`);
          if (verdict === true && usedKey !== undefined && usedKey !== submittedFields(body)) {
            // A key already used with another body: refused as idempotency_key_reused, nothing else.
            verdict = false;
            expect(status).toBe(422);
            await guard.rejected(describeCase(req));
            return;
          }
          if (status !== 201) {
            if (verdict === true) throw new Error(`valid submission refused with ${status}: ${describeCase(req)} -> ${JSON.stringify(answer)}`);
            if (!isAuthenticated(caller)) expect(status).toBe(401);
            await guard.rejected(describeCase(req));
            return;
          }
          if (verdict === false) throw new Error(`invalid submission accepted: ${describeCase(req)}`);
          const account = accountOf(caller)!;
          const jobId = (answer as { job_id: string }).job_id;
          const replayKey = `${account.accountId}:${sentKey}`;
          if (headers.get("Idempotent-Replayed") === "true") {
            // Same key, same body: the first answer again, and no new job.
            expect(jobId).toBe(firstJobOfKey.get(replayKey));
            await guard.check();
            return;
          }
          if (sentKey !== undefined) {
            expect(firstJobOfKey.has(replayKey)).toBe(false);
            firstJobOfKey.set(replayKey, jobId);
            bodyOfKey.set(replayKey, submittedFields(body));
          }
          const row = await env.DB.prepare(`SELECT account_id, video_url, video_type, config_name, captions_url FROM jobs WHERE id = ?`)
            .bind(jobId)
            .first<{ account_id: string; video_url: string; video_type: string; config_name: string | null; captions_url: string | null }>();
          const sent = parsedBody(body) as Record<string, unknown>;
          expect(row?.account_id).toBe(account.accountId);
          expect(row?.video_type).toBe(sent.video_type);
          expect(row?.config_name).toBe(sent.config_name ?? null);
          expect(acceptableStoredUrl(row!.video_url)).toBeNull();
          if (sent.captions_url == null) expect(row?.captions_url).toBeNull();
          else expect(acceptableStoredUrl(row!.captions_url ?? "")).toBeNull();
          // Free the one active slot for the next case.
          await cancel(jobId, account);
          await guard.accepted([jobId, replayKey], describeCase(req));
        },
      ),
      fuzzParameters(RUNS),
    );
    await guard.check();
    expect(tally.count("POST /api/v1/jobs")).toBeGreaterThanOrEqual(RUNS);
  }, TIMEOUT_MS);
});

function isAuthenticated(caller: Caller): boolean {
  return caller.kind === "valid" || caller.kind === "other-account";
}

/** Placeholders a generated path may hold; `prepare` swaps them for a job made just before the request. */
const FRESH_ACTIVE = "@fresh-active";
const FRESH_FINISHED = "@fresh-finished";

const validJobShape = fc.stringMatching(/^[A-Za-z0-9]{20}$/).map((s) => `job_${s}`);

function jobIds(...fresh: string[]): fc.Arbitrary<string> {
  // Fresh jobs cost a submission (and a cancel) each: about one case in fifteen.
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...finishedJobs, foreignJob) },
    { weight: fresh.length > 0 ? 1 : 0, arbitrary: fc.constantFrom(...(fresh.length > 0 ? fresh : [FRESH_ACTIVE])) },
    { weight: 2, arbitrary: validJobShape },
    { weight: 6, arbitrary: hostilePathPart },
  );
}

const noBody: RawBody = { kind: "none", payload: undefined };

function requestsFor(method: string, target: (id: string) => string, ids: fc.Arbitrary<string>, withBody: boolean): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    method: fc.constant(method),
    id: ids,
    caller: callers(accounts),
    contentType: withBody ? contentType : fc.constant(undefined),
    body: withBody ? fc.oneof(fc.constant(noBody), bodyFor(fc.constant({}))) : fc.constant(noBody),
    query: fc.option(hostilePathPart, { freq: 5 }),
  }).map(({ id, query, ...rest }) => ({ ...rest, target: target(id) + (query === null ? "" : `?${query}`) }));
}

/** The job id in a target such as /api/v1/jobs/<id>/cancel?x. */
function jobIdIn(target: string): string {
  return pathSegment(target, 4) ?? "";
}

async function freshJob(finished: boolean): Promise<string> {
  const jobId = await submitValid();
  if (finished) await cancel(jobId);
  return jobId;
}

describe("fuzz: one job", () => {
  it(`GET /api/v1/jobs/{job_id}: ${RUNS} generated requests`, async () => {
    await freshAccounts();
    const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId], 500);
    await fuzzEndpoint(tally, {
      endpoint: "GET /api/v1/jobs/{job_id}",
      op: { method: "get", path: "/api/v1/jobs/{job_id}" },
      runs: RUNS,
      guard,
      requests: requestsFor("GET", (id) => `/api/v1/jobs/${id}`, jobIds(), false),
      judge: (req, { status, body }) => {
        const account = accountOf(req.caller);
        const id = jobIdIn(req.target);
        const own = (account === accounts.main && finishedJobs.includes(id)) || (account === accounts.other && id === foreignJob);
        if (account === null) expect(status).toBe(401);
        else if (own) expect(status).toBe(200);
        else expect(status).toBe(404);
        if (status === 200) expect((body as { job_id: string }).job_id).toBe(id);
      },
    });
    expect(tally.count("GET /api/v1/jobs/{job_id}")).toBeGreaterThanOrEqual(RUNS);
  }, TIMEOUT_MS);

  it(`POST /api/v1/jobs/{job_id}/cancel: ${RUNS} generated requests`, async () => {
    await freshAccounts();
    const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId], 500);
    let fresh: string | null = null;
    await fuzzEndpoint(tally, {
      endpoint: "POST /api/v1/jobs/{job_id}/cancel",
      op: { method: "post", path: "/api/v1/jobs/{job_id}/cancel" },
      runs: RUNS,
      guard,
      requests: requestsFor("POST", (id) => `/api/v1/jobs/${id}/cancel`, jobIds(FRESH_ACTIVE), true),
      prepare: async (req) => {
        if (!req.target.includes(FRESH_ACTIVE)) return req;
        fresh = await freshJob(false);
        // One snapshot: every change since the last checkpoint must belong to the job just made.
        await guard.accepted([fresh], "setup");
        return { ...req, target: req.target.replace(FRESH_ACTIVE, fresh) };
      },
      judge: async (req, { status, body }) => {
        const account = accountOf(req.caller);
        const id = jobIdIn(req.target);
        const active = id === fresh;
        const own = (account === accounts.main && (finishedJobs.includes(id) || active)) || (account === accounts.other && id === foreignJob);
        const bodyless = req.body.kind === "none" || req.body.kind === "empty";
        // A declared Content-Type must be JSON even without a body; a body must be JSON within the size limit
        // (JSON whitespace alone reads as no body, as the body guard says).
        const bodyOk = isJsonMediaType(req.contentType)
          ? (isBlankBody(req.body) || parsedBody(req.body) !== undefined) && payloadBytes(req.body) <= 16 * 1024
          : bodyless && req.contentType === undefined;
        if (account === null) expect(status).toBe(401);
        else if (!bodyOk) expect([400, 413, 415]).toContain(status);
        else if (own && active) expect(status).toBe(200);
        else if (own) expect(status).toBe(409);
        else expect(status).toBe(404);
        if (status === 200) {
          expect(body).toMatchObject({ job_id: id, status: "canceled", credits_charged: 0 });
          await guard.accepted([id], describeCase(req));
        } else if (active) {
          await cancel(id);
          await guard.accepted([id], "cleanup");
        }
        if (active) fresh = null;
      },
    });
    expect(tally.count("POST /api/v1/jobs/{job_id}/cancel")).toBeGreaterThanOrEqual(RUNS);
  }, TIMEOUT_MS);

  it(`DELETE /api/v1/jobs/{job_id}: ${RUNS} generated requests`, async () => {
    await freshAccounts();
    const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId], 500);
    const deleted = new Set<string>();
    let fresh: string | null = null;
    let statusBefore: string | null = null;
    await fuzzEndpoint(tally, {
      endpoint: "DELETE /api/v1/jobs/{job_id}",
      op: { method: "delete", path: "/api/v1/jobs/{job_id}" },
      runs: RUNS,
      guard,
      requests: requestsFor("DELETE", (id) => `/api/v1/jobs/${id}`, jobIds(FRESH_FINISHED, FRESH_ACTIVE), false),
      prepare: async (req) => {
        const marker = [FRESH_FINISHED, FRESH_ACTIVE].find((m) => req.target.includes(m));
        let target = req.target;
        if (marker) {
          fresh = await freshJob(marker === FRESH_FINISHED);
          await guard.accepted([fresh], "setup");
          target = target.replace(marker, fresh);
        }
        const row = await env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(jobIdIn(target)).first<{ status: string }>();
        statusBefore = row?.status ?? null;
        return { ...req, target };
      },
      judge: async (req, { status }) => {
        const account = accountOf(req.caller);
        const id = jobIdIn(req.target);
        const row = await env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(id).first<{ status: string }>();
        const isFresh = id === fresh;
        const own = (account === accounts.main && (finishedJobs.includes(id) || isFresh)) || (account === accounts.other && id === foreignJob);
        if (account === null) expect(status).toBe(401);
        else if (own && deleted.has(id)) expect(status).toBe(404);
        else if (own && statusBefore === "canceled") expect(status).toBe(204);
        else if (own) expect(status).toBe(409);
        else expect(status).toBe(404);
        if (status === 204) {
          deleted.add(id);
          expect(row).toBeNull();
          await guard.accepted([id], describeCase(req));
        } else if (isFresh && (row?.status === "queued" || row?.status === "processing")) {
          await cancel(id);
          await guard.accepted([id], "cleanup");
        }
        if (isFresh) fresh = null;
      },
    });
    expect(tally.count("DELETE /api/v1/jobs/{job_id}")).toBeGreaterThanOrEqual(RUNS);
  }, TIMEOUT_MS);
});
