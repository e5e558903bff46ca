/** Fuzzed requests: who is calling, with which headers and body, and how they become a Request. */
import fc from "fast-check";
import { env } from "cloudflare:test";
import { API_KEY_PREFIX } from "../../../src/keys/api-key.ts";
import { createAccount, issueKey, adminFetch, type TestAccount } from "../helpers.ts";
import type { RawBody } from "./bodies.ts";
import { ORIGIN } from "./invoke.ts";
import { hostileString } from "./strings.ts";

export type AuthKind = "valid" | "other-account" | "revoked" | "none" | "garbage" | "unknown-key" | "admin-token" | "wrong-scheme";

export interface Caller {
  kind: AuthKind;
  authorization: string | undefined;
}

/** An unmetered account (so the request window never masks behaviour), a second one, and a revoked key. */
export interface FuzzAccounts {
  main: TestAccount;
  other: TestAccount;
  revokedKey: string;
}

export async function fuzzAccounts(): Promise<FuzzAccounts> {
  const main = await createAccount("unmetered");
  const other = await createAccount("unmetered");
  const revoked = await issueKey(main.accountId, "to-revoke");
  const res = await adminFetch(`/admin/v1/keys/${revoked.keyId}/revoke`, { method: "POST" });
  if (res.status !== 200) throw new Error(`revoking failed: ${res.status}`);
  return { main, other, revokedKey: revoked.apiKey };
}

/** Callers weighted towards the valid key, so most requests reach the handlers. */
export function callers(accounts: FuzzAccounts, validWeight = 12): fc.Arbitrary<Caller> {
  return fc.oneof(
    { weight: validWeight, arbitrary: fc.constant<Caller>({ kind: "valid", authorization: `Bearer ${accounts.main.apiKey}` }) },
    { weight: 1, arbitrary: fc.constant<Caller>({ kind: "other-account", authorization: `Bearer ${accounts.other.apiKey}` }) },
    { weight: 1, arbitrary: fc.constant<Caller>({ kind: "revoked", authorization: `Bearer ${accounts.revokedKey}` }) },
    { weight: 1, arbitrary: fc.constant<Caller>({ kind: "none", authorization: undefined }) },
    { weight: 1, arbitrary: fc.constant<Caller>({ kind: "admin-token", authorization: `Bearer ${env.ADMIN_TOKEN}` }) },
    {
      weight: 1,
      arbitrary: fc.stringMatching(/^[0-9A-Za-z]{40,64}$/).map((tail): Caller => ({ kind: "unknown-key", authorization: `Bearer ${API_KEY_PREFIX}${tail}` })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(`Basic ${accounts.main.apiKey}`, `Token ${accounts.main.apiKey}`, accounts.main.apiKey, `Bearer  ${accounts.main.apiKey}x`, `Bearer ${accounts.main.apiKey} extra`).map(
        (authorization): Caller => ({ kind: "wrong-scheme", authorization }),
      ),
    },
    {
      weight: 1,
      arbitrary: hostileString.map((s): Caller => ({ kind: "garbage", authorization: `Bearer ${s.replace(/[^\x20-\x7e]/g, "")}` })),
    },
  );
}

export function isAuthenticated(caller: Caller): boolean {
  return caller.kind === "valid" || caller.kind === "other-account";
}

export interface FuzzRequest {
  method: string;
  /** Path plus query, already encoded as sent. */
  target: string;
  caller: Caller;
  contentType: string | undefined;
  body: RawBody;
  headers?: Record<string, string>;
}

const encoder = new TextEncoder();

/** Bodies go as bytes, so no Content-Type is added that the case did not choose. */
export function toRequest(req: FuzzRequest): Request {
  const headers = new Headers(req.headers);
  if (req.caller.authorization !== undefined) headers.set("Authorization", req.caller.authorization);
  if (req.contentType !== undefined) headers.set("Content-Type", req.contentType);
  const canHaveBody = req.method !== "GET" && req.method !== "HEAD";
  const payload = canHaveBody ? req.body.payload : undefined;
  const body = typeof payload === "string" ? encoder.encode(payload) : payload;
  // As an HTTP client would: the length travels with the body.
  if (body !== undefined && !headers.has("Content-Length")) headers.set("Content-Length", String(body.byteLength));
  return new Request(`${ORIGIN}${req.target}`, { method: req.method, headers, body });
}

/** The media type a body guard should accept: application/json, any case, parameters allowed. */
export function isJsonMediaType(value: string | undefined): boolean {
  return value !== undefined && value.split(";", 1)[0]!.trim().toLowerCase() === "application/json";
}

/** The body parsed as JSON when the case sent a well-formed JSON body, else undefined. */
export function parsedBody(body: RawBody): unknown {
  if (body.payload === undefined) return undefined;
  // UTF-8 decoding drops a leading byte order mark, which RFC 8259 lets a parser ignore.
  const text = typeof body.payload === "string" ? body.payload.replace(/^\uFEFF/, "") : new TextDecoder().decode(body.payload);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Whether the service reads a body as no body: none at all, or JSON
 * whitespace only (space, tab, LF, CR: RFC 8259), as the body guard does.
 */
export function isBlankBody(body: RawBody): boolean {
  if (body.kind === "none" || body.kind === "empty" || body.payload === undefined) return true;
  const text = typeof body.payload === "string" ? body.payload : new TextDecoder().decode(body.payload);
  return /^[ \t\n\r]*$/.test(text);
}

/** Path segment `index` of a target as the service sees it (after URL parsing), percent-decoded when possible. */
export function pathSegment(target: string, index: number): string | undefined {
  const segment = new URL(`${ORIGIN}${target}`).pathname.split("/")[index];
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Whether a target's path is an instance of an OpenAPI path template (same segments, non-empty parameters). */
export function matchesTemplate(template: string, target: string): boolean {
  const actual = new URL(`${ORIGIN}${target}`).pathname.split("/");
  const expected = template.split("/");
  if (actual.length !== expected.length) return false;
  return expected.every((part, i) => (part.startsWith("{") ? actual[i] !== "" : part === actual[i]));
}

/** The body's size in bytes as sent (UTF-8 for text). */
export function payloadBytes(body: RawBody): number {
  if (body.payload === undefined) return 0;
  return typeof body.payload === "string" ? encoder.encode(body.payload).byteLength : body.payload.byteLength;
}
