/**
 * Generated bad input for the rest of the surface: usage, video types, the
 * OpenAPI document, health, the job list, odd paths anywhere, the local CDN,
 * and the request window of a limited plan. Same oracle as the other fuzz
 * suites (fuzz/oracle.ts).
 */
import fc from "fast-check";
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "./fuzz/invoke.ts";
import { checkResponse } from "./fuzz/oracle.ts";
import { fuzzEndpoint } from "./fuzz/property.ts";
import { bodyFor, contentType, jsonValue, type RawBody } from "./fuzz/bodies.ts";
import { callers, fuzzAccounts, toRequest, type Caller, type FuzzAccounts, type FuzzRequest } from "./fuzz/requests.ts";
import { hostilePathPart, hostileString } from "./fuzz/strings.ts";
import { Tally } from "./fuzz/tally.ts";
import { WriteGuard } from "./fuzz/write-guard.ts";
import { FakeEngine } from "./engine-stub.ts";
import { createAccount } from "./helpers.ts";
import { fuzzParameters, fuzzRuns } from "./fuzz/runs.ts";

const RUNS = fuzzRuns(2_000);
// A budget for a stuck run, not a speed target: 2,000 requests take far longer on a loaded machine than on a quiet one.
const TIMEOUT_MS = 900_000;
const tally = new Tally();
let accounts: FuzzAccounts;
const mainJobs: string[] = [];
let issuedCursor = "";

const noBody: RawBody = { kind: "none", payload: undefined };

beforeAll(async () => {
  new FakeEngine().install();
  accounts = await fuzzAccounts();
  const auth = { kind: "valid" as const, authorization: `Bearer ${accounts.main.apiKey}` };
  for (let i = 0; i < 3; i++) {
    const submitted = await send(toRequest({ method: "POST", target: "/api/v1/jobs", caller: auth, contentType: "application/json", body: { kind: "valid", payload: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "podcast" }) } }));
    const jobId = (JSON.parse(submitted.text) as { job_id: string }).job_id;
    await send(toRequest({ method: "POST", target: `/api/v1/jobs/${jobId}/cancel`, caller: auth, contentType: undefined, body: noBody }));
    mainJobs.push(jobId);
  }
  const page = await send(toRequest({ method: "GET", target: "/api/v1/jobs?status=all&limit=1", caller: auth, contentType: undefined, body: noBody }));
  issuedCursor = (JSON.parse(page.text) as { next_cursor: string }).next_cursor;
  await env.CLIPS.put(CDN_KEY, new Uint8Array(4096).fill(7), { httpMetadata: { contentType: "video/mp4" } });
});

afterAll(() => tally.print("fuzz: usage, video types, openapi, health, job list, odd paths, CDN, request window"));

function isAuthenticated(caller: Caller): boolean {
  return caller.kind === "valid" || caller.kind === "other-account";
}

function getRequests(path: string): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({ caller: callers(accounts), query: fc.option(fc.array(fc.tuple(hostilePathPart, hostilePathPart), { maxLength: 4 }), { freq: 3 }) })
    .map(({ caller, query }) => ({
      method: "GET",
      target: path + (query === null ? "" : `?${query.map(([k, v]) => `${k}=${v}`).join("&")}`),
      caller,
      contentType: undefined,
      body: noBody,
    }));
}

describe("fuzz: read-only endpoints", () => {
  for (const [path, authenticated] of [
    ["/api/v1/usage", true],
    ["/api/v1/video-types", true],
    ["/api/v1/openapi.json", false],
    ["/health", false],
  ] as const) {
    it(`GET ${path}: ${RUNS} generated requests`, async () => {
      await fuzzEndpoint(tally, {
        endpoint: `GET ${path}`,
        op: { method: "get", path },
        runs: RUNS,
        guard: new WriteGuard([accounts.main.accountId, accounts.other.accountId], 1000),
        requests: getRequests(path),
        judge: (req, { status, body }) => {
          if (authenticated && !isAuthenticated(req.caller)) return expect(status).toBe(401);
          expect(status).toBe(200);
          if (path === "/api/v1/usage") expect((body as { plan: string }).plan).toBe("unmetered");
        },
      });
    }, TIMEOUT_MS);
  }

  it(`GET /api/v1/jobs (list): ${RUNS} generated query strings`, async () => {
    const STATUSES = ["all", "queued", "processing", "completed", "failed", "canceled"];
    const param = fc.oneof(
      fc.tuple(fc.constant("status"), fc.oneof(fc.constantFrom(...STATUSES), hostilePathPart)),
      fc.tuple(fc.constant("limit"), fc.oneof(fc.integer({ min: -5, max: 120 }).map(String), fc.constantFrom("1e1", "0x10", " 5", "5.5", "", "NaN", "Infinity", "-0"), hostilePathPart)),
      fc.tuple(fc.constant("cursor"), fc.oneof(fc.constant(issuedCursor), hostilePathPart, fc.base64String().map((s) => s.replace(/[+/=]/g, "")))),
      fc.tuple(hostilePathPart, hostilePathPart),
    );
    await fuzzEndpoint(tally, {
      endpoint: "GET /api/v1/jobs",
      op: { method: "get", path: "/api/v1/jobs" },
      runs: RUNS,
      guard: new WriteGuard([accounts.main.accountId, accounts.other.accountId], 1000),
      requests: fc.record({ caller: callers(accounts), params: fc.array(param, { maxLength: 4 }) }).map(({ caller, params }) => ({
        method: "GET",
        target: `/api/v1/jobs${params.length ? "?" : ""}${params.map(([k, v]) => `${k}=${v}`).join("&")}`,
        caller,
        contentType: undefined,
        body: noBody,
      })),
      judge: async (req, { status, body }) => {
        if (!isAuthenticated(req.caller)) return expect(status).toBe(401);
        const query = new URL(`http://x${req.target}`).searchParams;
        const once = (name: string) => query.getAll(name).length <= 1;
        const statusOk = !query.has("status") || STATUSES.includes(query.get("status")!);
        const limitText = query.get("limit");
        const limit = limitText === null ? 50 : Number(limitText.trim() === "" ? Number.NaN : limitText);
        const limitOk = limitText === null || (Number.isInteger(limit) && limit >= 1 && limit <= 100);
        const cursorOk = !query.has("cursor") || query.get("cursor") === issuedCursor;
        const valid = once("status") && once("limit") && once("cursor") && statusOk && limitOk && cursorOk;
        if (status === 200) {
          // Never accept what the independent reading says is invalid.
          if (!valid && !(query.has("cursor") && once("cursor") && statusOk && limitOk && once("status") && once("limit"))) {
            throw new Error(`invalid query accepted`);
          }
          const list = body as { jobs: { job_id: string }[] };
          const own = req.caller.kind === "valid" ? mainJobs : [];
          for (const job of list.jobs) expect(own).toContain(job.job_id);
          expect(list.jobs.length).toBeLessThanOrEqual(limitOk ? limit : 100);
        } else {
          expect(valid).toBe(false);
          expect(status).toBe(400);
        }
      },
    });
  }, TIMEOUT_MS);
});

const CDN_KEY = "clips/job_CdnFixture0000000000/0.mp4";

describe("fuzz: odd paths and the CDN", () => {
  it(`any method on odd paths: ${RUNS} generated requests`, async () => {
    const prefixes = ["/", "/api/v1/", "/api/v1/jobs/", "/api/v1/configs/", "/admin/v1/", "/internal/v1/jobs/", "/cdn/", "/docs/errors/", "/api/", "//api/v1/usage/"];
    await fuzzEndpoint(tally, {
      endpoint: "* odd paths",
      op: { method: "get", path: null },
      runs: RUNS,
      requests: fc
        .record({
          method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"),
          prefix: fc.constantFrom(...prefixes),
          segments: fc.array(hostilePathPart, { minLength: 0, maxLength: 4 }),
          caller: callers(accounts),
          contentType,
          body: bodyFor(jsonValue, 1),
        })
        .map(({ prefix, segments, ...rest }) => ({ ...rest, target: prefix + segments.join("/") })),
      judge: () => undefined,
    });
  }, TIMEOUT_MS);

  it(`GET /cdn/*: ${RUNS} generated paths and ranges`, async () => {
    const keyParts = CDN_KEY.split("/");
    const paths = fc.oneof(
      fc.constant(CDN_KEY),
      fc.constant(keyParts.map(encodeURIComponent).join("%2F")),
      fc.constant(`clips/x/../${keyParts.slice(1).join("/")}`),
      fc.constant(`clips/%2e%2e/${keyParts.slice(1).join("/")}`),
      fc.constant(`${CDN_KEY}%00`),
      fc.array(hostilePathPart, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/")),
      fc.tuple(fc.constantFrom(...keyParts), hostilePathPart).map(([a, b]) => `${a}/${b}`),
    );
    const ranges = fc.option(fc.oneof(fc.constantFrom("bytes=0-0", "bytes=0-", "bytes=-1", "bytes=4096-", "bytes=5-2", "bytes=0-1,3-4", "bytes=-0", "items=0-1", "bytes=99999999999999999999-"), hostileString.map((s) => s.replace(/[^\x20-\x7e]/g, ""))), { freq: 2 });
    await fuzzEndpoint(tally, {
      endpoint: "GET /cdn/*",
      op: { method: "get", path: null },
      runs: RUNS,
      requests: fc.record({ path: paths, range: ranges, caller: callers(accounts) }).map(({ path, range, caller }): FuzzRequest => ({
        method: "GET",
        target: `/cdn/${path}`,
        caller,
        contentType: undefined,
        body: noBody,
        headers: range === null ? undefined : { Range: range },
      })),
      judge: (req, { status }) => {
        // Dot segments can take a path out of /cdn/ altogether (URL parsing): then it is another route's answer.
        const pathname = new URL(`http://x${req.target}`).pathname;
        if (!pathname.startsWith("/cdn/")) return;
        // Only the one stored object may ever be served, whatever the spelling of the path.
        if (status === 200 || status === 206 || status === 304) {
          expect(decodeURIComponent(pathname)).toBe(`/cdn/${CDN_KEY}`);
        } else {
          expect([404, 416]).toContain(status);
        }
      },
    });
  }, TIMEOUT_MS);
});

describe("fuzz: request window of a limited plan", () => {
  it("lets exactly 60 of 100 simultaneous generated requests through per free account", async () => {
    let rounds = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            method: fc.constantFrom("GET", "POST", "PUT", "DELETE"),
            path: fc.constantFrom("/api/v1/usage", "/api/v1/jobs", "/api/v1/configs/x", "/api/v1/video-types", "/api/v1/jobs/job_AAAAAAAAAAAAAAAAAAAA"),
            body: bodyFor(jsonValue, 1),
            contentType,
          }),
          { minLength: 100, maxLength: 100 },
        ),
        async (cases) => {
          rounds += 1;
          const account = await createAccount("free");
          const caller = { kind: "valid" as const, authorization: `Bearer ${account.apiKey}` };
          const results = await Promise.all(
            cases.map(async ({ method, path, body, contentType: type }) => {
              const req: FuzzRequest = { method, target: path, caller, contentType: type, body };
              const res = await send(toRequest(req));
              tally.record("free plan, 100 at once", res.status);
              await checkResponse(res, { method: "get", path: null });
              expect(res.headers.get("RateLimit-Policy")).toBe('"default";q=60;w=60');
              if (res.status === 429) expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
              return res.status;
            }),
          );
          expect(results.filter((s) => s !== 429).length).toBe(60);
          expect(results.filter((s) => s === 429).length).toBe(40);
        },
      ),
      fuzzParameters(3),
    );
    expect(rounds).toBe(3);
  }, TIMEOUT_MS);
});
