/**
 * Shared test helpers: accounts and keys are created through the real
 * operator API, so every suite exercises the same path an operator uses.
 */
import { env, SELF } from "cloudflare:test";

export const BASE = "http://worker.test";

export function adminHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { Authorization: `Bearer ${env.ADMIN_TOKEN}`, "Content-Type": "application/json", ...extra };
}

export interface TestAccount {
  accountId: string;
  apiKey: string;
  keyId: string;
  email: string;
}

let accountCounter = 0;

/** Creates an account (plan `free` unless told) and returns it with its first key. */
export async function createAccount(plan = "free"): Promise<TestAccount> {
  accountCounter += 1;
  const email = `t${Date.now()}-${accountCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const res = await SELF.fetch(`${BASE}/admin/v1/accounts`, {
    method: "POST",
    headers: adminHeaders(),
    body: JSON.stringify({ email, plan }),
  });
  if (res.status !== 201) throw new Error(`creating account failed: ${res.status} ${await res.text()}`);
  const body = await res.json<{ account_id: string; api_key: string; key_id: string }>();
  return { accountId: body.account_id, apiKey: body.api_key, keyId: body.key_id, email };
}

/** Issues another key for the account. */
export async function issueKey(accountId: string, name = "extra"): Promise<{ keyId: string; apiKey: string }> {
  const res = await SELF.fetch(`${BASE}/admin/v1/accounts/${accountId}/keys`, {
    method: "POST",
    headers: adminHeaders(),
    body: JSON.stringify({ name }),
  });
  if (res.status !== 201) throw new Error(`issuing key failed: ${res.status} ${await res.text()}`);
  const body = await res.json<{ key_id: string; api_key: string }>();
  return { keyId: body.key_id, apiKey: body.api_key };
}

/** An authenticated request to the public API (path relative to the origin, e.g. /api/v1/usage). */
export function api(account: Pick<TestAccount, "apiKey">, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${account.apiKey}`);
  if (init.body !== undefined && !headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  return SELF.fetch(`${BASE}${path}`, { ...init, headers });
}

export function adminFetch(path: string, init: RequestInit = {}): Promise<Response> {
  return SELF.fetch(`${BASE}${path}`, { ...init, headers: { ...adminHeaders(), ...(init.headers as Record<string, string> | undefined) } });
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id: string;
  errors?: { path: string; message: string }[];
  [extra: string]: unknown;
}

/** Asserts a problem+json response and returns its body. */
export async function expectProblem(res: Response, status: number, code: string): Promise<Problem> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${res.status}: ${text}`);
  const contentType = res.headers.get("Content-Type") ?? "";
  if (!contentType.startsWith("application/problem+json")) throw new Error(`expected problem+json, got ${contentType}`);
  const body = JSON.parse(text) as Problem;
  if (body.code !== code) throw new Error(`expected code ${code}, got ${body.code}: ${text}`);
  if (body.status !== status) throw new Error(`problem status ${body.status} != ${status}`);
  if (body.request_id !== res.headers.get("Request-Id")) throw new Error("request_id does not match the Request-Id header");
  if (body.type !== `/docs/errors#${code}`) throw new Error(`unexpected type ${body.type}`);
  if (/\bat .+:\d+:\d+/.test(text)) throw new Error(`problem carries a stack trace: ${text}`);
  return body;
}
