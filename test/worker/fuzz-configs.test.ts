/**
 * Generated bad input for saved configurations (SPEC section 3-4): list, get,
 * put and delete, each with at least 2,000 generated requests, judged
 * against an in-test model of each account's saved configurations.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ASPECT_RATIOS,
  CAPTION_FONTS,
  CAPTION_LANGUAGES,
  CAPTION_MODES,
  CAPTION_POSITIONS,
  CAPTION_STYLES,
  ClipConfig,
  DEFAULT_CLIP_CONFIG,
  HEX_COLOR_PATTERN,
  LAYOUTS,
  LOGO_POSITIONS,
  MAX_HOOK_TITLE_SECONDS,
  MAX_PROMPT_CHARS,
  REFRAME_MODES,
  REMOVE_SILENCE_MODES,
  SPEECH_LANGUAGES,
} from "#contract";
import { MAX_JSON_BODY_BYTES } from "../../src/http/body-guard.ts";
import { arbitraryFromSchema, bodyFor, contentType, inputSchema, type RawBody } from "./fuzz/bodies.ts";
import { fuzzEndpoint, describeCase } from "./fuzz/property.ts";
import { callers, fuzzAccounts, pathSegment, payloadBytes, isJsonMediaType, parsedBody, type Caller, type FuzzAccounts, type FuzzRequest } from "./fuzz/requests.ts";
import { hostilePathPart } from "./fuzz/strings.ts";
import { Tally } from "./fuzz/tally.ts";
import { WriteGuard } from "./fuzz/write-guard.ts";
import type { TestAccount } from "./helpers.ts";
import { fuzzRuns } from "./fuzz/runs.ts";

const RUNS = fuzzRuns(2_000);
// A budget for a stuck run, not a speed target: 2,000 requests take far longer on a loaded machine than on a quiet one.
const TIMEOUT_MS = 900_000;
const MAX_CONFIGS = 100;
const tally = new Tally();
let accounts: FuzzAccounts;

/**
 * A saved configuration: every field of the contract's ClipConfig, with its
 * defaults (brand.test.ts and jobs-flow.test.ts check the defaults' values).
 * The rules a body must follow are read independently below (validConfig).
 */
type StoredConfig = ClipConfig;
const DEFAULTS: StoredConfig = DEFAULT_CLIP_CONFIG;
const FIELDS = Object.keys(DEFAULTS) as (keyof StoredConfig)[];

/** The model: what each account has saved. */
const saved = new Map<string, Map<string, StoredConfig>>();

beforeAll(async () => {
  accounts = await fuzzAccounts();
  saved.set(accounts.main.accountId, new Map());
  saved.set(accounts.other.accountId, new Map());
});

afterAll(() => tally.print("fuzz: saved configurations (generated requests per endpoint, statuses seen)"));

function accountOf(caller: Caller): TestAccount | null {
  if (caller.kind === "valid") return accounts.main;
  if (caller.kind === "other-account") return accounts.other;
  return null;
}

/** A small pool of valid names, so puts, gets and deletes meet each other; plus anything else. */
const NAME_POOL = ["a", "short", "vertical_1080", "square-720", "z9", "my-config", "x".repeat(64)];
const names: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAME_POOL) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,63}$/) },
  { weight: 1, arbitrary: fc.constantFrom("A", "-lead", "_lead", "x".repeat(65), "caf\u00e9", "a b", "a.b", "a/b") .map(encodeURIComponent) },
  { weight: 3, arbitrary: hostilePathPart },
);

/** The name as the service sees it, or null when the path segment is not a valid name. */
function validName(target: string): string | null {
  const name = pathSegment(target, 4);
  return name !== undefined && /^[a-z0-9][a-z0-9_-]{0,63}$/.test(name) ? name : null;
}

/** An independent reading of SPEC section 3's configuration rules; null when the body is not a valid configuration. */
function validConfig(body: RawBody, type: string | undefined): StoredConfig | null {
  if (!isJsonMediaType(type)) return null;
  // Over 16 KiB is refused whatever it holds (SPEC section 5).
  if (payloadBytes(body) > MAX_JSON_BODY_BYTES) return null;
  const value = parsedBody(body);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  if (Object.keys(value).some((key) => !(FIELDS as string[]).includes(key))) return null;
  const merged = { ...DEFAULTS, ...(value as Partial<StoredConfig>) };
  const intIn = (n: unknown, min: number, max: number) => typeof n === "number" && Number.isInteger(n) && n >= min && n <= max;
  const oneOf = (list: readonly unknown[], v: unknown) => list.includes(v);
  const color = (v: unknown) => typeof v === "string" && HEX_COLOR_PATTERN.test(v);
  const ok =
    oneOf(ASPECT_RATIOS, merged.aspect_ratio) &&
    (merged.resolution === 720 || merged.resolution === 1080) &&
    intIn(merged.min_clip_seconds, 5, 120) &&
    intIn(merged.max_clip_seconds, 10, 180) &&
    intIn(merged.max_clips, 1, 20) &&
    oneOf(REFRAME_MODES, merged.reframe) &&
    oneOf(LAYOUTS, merged.layout) &&
    oneOf(CAPTION_MODES, merged.captions) &&
    oneOf(CAPTION_STYLES, merged.caption_style) &&
    oneOf(CAPTION_POSITIONS, merged.caption_position) &&
    merged.max_clip_seconds >= merged.min_clip_seconds &&
    (merged.prompt === null || (typeof merged.prompt === "string" && merged.prompt.length <= MAX_PROMPT_CHARS && /\S/.test(merged.prompt))) &&
    oneOf(REMOVE_SILENCE_MODES, merged.remove_silence) &&
    typeof merged.remove_fillers === "boolean" &&
    // Brand and language.
    oneOf(CAPTION_FONTS, merged.caption_font) &&
    intIn(merged.caption_size, 50, 200) &&
    color(merged.caption_color) &&
    color(merged.caption_highlight_color) &&
    color(merged.caption_outline_color) &&
    color(merged.caption_box_color) &&
    oneOf(LOGO_POSITIONS, merged.logo_position) &&
    intIn(merged.logo_size, 5, 50) &&
    typeof merged.logo_opacity === "number" &&
    merged.logo_opacity >= 0.1 &&
    merged.logo_opacity <= 1 &&
    intIn(merged.hook_title_seconds, 0, MAX_HOOK_TITLE_SECONDS) &&
    (merged.language === null || oneOf(SPEECH_LANGUAGES, merged.language)) &&
    (merged.caption_language === null || oneOf(CAPTION_LANGUAGES, merged.caption_language));
  return ok ? merged : null;
}

const noBody: RawBody = { kind: "none", payload: undefined };

function requests(method: string, withBody: boolean): fc.Arbitrary<FuzzRequest> {
  const configBodies = bodyFor(arbitraryFromSchema(inputSchema(ClipConfig)));
  return fc
    .record({
      caller: callers(accounts),
      name: names,
      contentType: withBody ? contentType : fc.constant(undefined),
      body: withBody ? configBodies : fc.constant(noBody),
      query: fc.option(hostilePathPart, { freq: 6 }),
    })
    .map(({ name, query, ...rest }) => ({ ...rest, method, target: `/api/v1/configs/${name}${query === null ? "" : `?${query}`}` }));
}

function pickFields(body: unknown): StoredConfig {
  const b = body as Record<string, unknown>;
  return Object.fromEntries(FIELDS.map((field) => [field, b[field]])) as unknown as StoredConfig;
}

describe("fuzz: saved configurations", () => {
  it(`PUT /api/v1/configs/{name}: ${RUNS} generated requests`, async () => {
    const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId], 200);
    await fuzzEndpoint(tally, {
      endpoint: "PUT /api/v1/configs/{name}",
      op: { method: "put", path: "/api/v1/configs/{name}" },
      runs: RUNS,
      guard,
      requests: fc.oneof(requests("PUT", true), fc.constantFrom(...Array.from({ length: 120 }, (_, i) => `c${i}`)).chain((name) =>
        // Bursts of new names push an account to its limit of saved configurations.
        requests("PUT", true).map((req) => ({ ...req, caller: { kind: "valid" as const, authorization: `Bearer ${accounts.main.apiKey}` }, contentType: "application/json", body: { kind: "valid", payload: "{}" }, target: `/api/v1/configs/${name}` })),
      )),
      judge: async (req, { status, body }) => {
        const account = accountOf(req.caller);
        if (account === null) return expect(status).toBe(401);
        const model = saved.get(account.accountId)!;
        const name = validName(req.target);
        const config = validConfig(req.body, req.contentType);
        if (name === null || config === null) {
          expect(status).toBeGreaterThanOrEqual(400);
          return;
        }
        if (!model.has(name) && model.size >= MAX_CONFIGS) return expect(status).toBe(409);
        expect(status).toBe(model.has(name) ? 200 : 201);
        expect(pickFields(body)).toEqual(config);
        expect((body as { name: string }).name).toBe(name);
        model.set(name, config);
        await guard.accepted([`${account.accountId}:${name}:`], describeCase(req));
      },
    });
    expect(saved.get(accounts.main.accountId)!.size).toBe(MAX_CONFIGS);
  }, TIMEOUT_MS);

  it(`GET /api/v1/configs/{name}: ${RUNS} generated requests`, async () => {
    await fuzzEndpoint(tally, {
      endpoint: "GET /api/v1/configs/{name}",
      op: { method: "get", path: "/api/v1/configs/{name}" },
      runs: RUNS,
      guard: new WriteGuard([accounts.main.accountId, accounts.other.accountId], 1000),
      requests: requests("GET", false),
      judge: (req, { status, body }) => {
        const account = accountOf(req.caller);
        if (account === null) return expect(status).toBe(401);
        const name = validName(req.target);
        const stored = name === null ? undefined : saved.get(account.accountId)!.get(name);
        if (name === null) expect([400, 404]).toContain(status);
        else if (stored === undefined) expect(status).toBe(404);
        else {
          expect(status).toBe(200);
          expect(pickFields(body)).toEqual(stored);
        }
      },
    });
  }, TIMEOUT_MS);

  it(`GET /api/v1/configs: ${RUNS} generated requests`, async () => {
    await fuzzEndpoint(tally, {
      endpoint: "GET /api/v1/configs",
      op: { method: "get", path: "/api/v1/configs" },
      runs: RUNS,
      guard: new WriteGuard([accounts.main.accountId, accounts.other.accountId], 1000),
      requests: requests("GET", false).map((req) => ({ ...req, target: `/api/v1/configs${req.target.includes("?") ? req.target.slice(req.target.indexOf("?")) : ""}` })),
      judge: (req, { status, body }) => {
        const account = accountOf(req.caller);
        if (account === null) return expect(status).toBe(401);
        expect(status).toBe(200);
        const list = body as { configs: { name: string }[]; count: number };
        expect(list.count).toBe(saved.get(account.accountId)!.size);
        expect(new Set(list.configs.map((c) => c.name))).toEqual(new Set(saved.get(account.accountId)!.keys()));
      },
    });
  }, TIMEOUT_MS);

  it(`DELETE /api/v1/configs/{name}: ${RUNS} generated requests`, async () => {
    const guard = new WriteGuard([accounts.main.accountId, accounts.other.accountId], 500);
    await fuzzEndpoint(tally, {
      endpoint: "DELETE /api/v1/configs/{name}",
      op: { method: "delete", path: "/api/v1/configs/{name}" },
      runs: RUNS,
      guard,
      requests: requests("DELETE", false),
      judge: async (req, { status }) => {
        const account = accountOf(req.caller);
        if (account === null) return expect(status).toBe(401);
        const name = validName(req.target);
        const model = saved.get(account.accountId)!;
        if (name === null) return expect([400, 404]).toContain(status);
        if (!model.has(name)) return expect(status).toBe(404);
        expect(status).toBe(204);
        model.delete(name);
        await guard.accepted([`${account.accountId}:${name}:`], describeCase(req));
      },
    });
  }, TIMEOUT_MS);
});
