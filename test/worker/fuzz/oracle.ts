/**
 * What every response must satisfy (SPEC sections 5-6), checked against the
 * OpenAPI document the service itself serves: never a 5xx; every error is
 * problem+json with a code from src/http/errors.ts whose status matches, the
 * Request-Id header equal to its request_id and no stack trace; every success
 * of a documented operation matches that operation's response schema.
 */
import { ERROR_CODES, type ErrorCode } from "../../../src/http/errors.ts";
import { type Captured, ORIGIN, send } from "./invoke.ts";
import { SchemaChecker, type Schema } from "./json-schema.ts";

export interface Operation {
  method: "get" | "post" | "put" | "delete";
  /** The OpenAPI path template, e.g. /api/v1/jobs/{job_id}; null for routes outside the document. */
  path: string | null;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>
  >;
}

let served: { document: OpenApiDocument; checker: SchemaChecker } | null = null;

/** The document from GET /api/v1/openapi.json (fetched once per test file). */
export async function openApi(): Promise<{ document: OpenApiDocument; checker: SchemaChecker }> {
  if (served) return served;
  const res = await send(new Request(`${ORIGIN}/api/v1/openapi.json`));
  if (res.status !== 200) throw new Error(`openapi.json answered ${res.status}`);
  const document = JSON.parse(res.text) as OpenApiDocument;
  served = { document, checker: new SchemaChecker(document as unknown as Schema) };
  return served;
}

/** An operation's JSON request body schema as the served document gives it to clients. */
export async function documentedRequestBody(method: Operation["method"], path: string): Promise<Schema> {
  const schema = (await openApi()).document.paths[path]?.[method]?.requestBody?.content["application/json"]?.schema;
  if (!schema) throw new Error(`the OpenAPI document has no JSON request body for ${method} ${path}`);
  return schema;
}

export class OracleViolation extends Error {}

function fail(what: string, res: Captured): never {
  throw new OracleViolation(`${what} (status ${res.status}, body ${res.text.slice(0, 400)})`);
}

const STACK_TRACE = /\bat [^\s]+ \(?[^\s]*:\d+:\d+\)?|\.ts:\d+|\.js:\d+:\d+/;

/** Checks one response; returns the parsed JSON body (null when there is none). */
export async function checkResponse(res: Captured, op: Operation): Promise<unknown> {
  if (res.status >= 500) fail("5xx answer", res);
  const requestId = res.headers.get("Request-Id");
  if (!requestId) fail("no Request-Id header", res);
  if (STACK_TRACE.test(res.text)) fail("stack trace in the body", res);
  const contentType = res.headers.get("Content-Type") ?? "";

  if (res.status >= 400) {
    if (!contentType.startsWith("application/problem+json")) fail(`error with Content-Type ${contentType}`, res);
    const problem = JSON.parse(res.text) as Record<string, unknown>;
    const code = problem.code as ErrorCode;
    if (!(code in ERROR_CODES)) fail(`undocumented code ${String(problem.code)}`, res);
    if (ERROR_CODES[code].status !== res.status || problem.status !== res.status) fail(`code ${code} with status ${res.status}`, res);
    if (problem.request_id !== requestId) fail("request_id differs from the Request-Id header", res);
    if (problem.type !== `/docs/errors#${code}` || typeof problem.title !== "string" || typeof problem.detail !== "string") {
      fail("problem document misses type/title/detail", res);
    }
    if (op.path !== null) await checkDocumented(res, op, problem, "application/problem+json");
    return problem;
  }

  if (res.status === 204 || res.status === 304 || res.text === "") return null;
  if (op.path === null) return contentType.startsWith("application/json") ? (JSON.parse(res.text) as unknown) : null;
  if (!contentType.startsWith("application/json")) fail(`success with Content-Type ${contentType}`, res);
  const body = JSON.parse(res.text) as unknown;
  await checkDocumented(res, op, body, "application/json");
  return body;
}

/** The status must be listed for the operation, and the body must match the schema listed there. */
async function checkDocumented(res: Captured, op: Operation, body: unknown, mediaType: string): Promise<void> {
  const { document, checker } = await openApi();
  const operation = document.paths[op.path!]?.[op.method];
  if (!operation) throw new Error(`${op.method} ${op.path} is not in the OpenAPI document`);
  const response = operation.responses[String(res.status)];
  if (!response) fail(`status ${res.status} is not documented for ${op.method.toUpperCase()} ${op.path}`, res);
  const schema = response.content?.[mediaType]?.schema;
  if (!schema) return;
  const errors = checker.check(schema, body);
  if (errors.length > 0) fail(`body does not match the OpenAPI document: ${errors.slice(0, 5).join("; ")}`, res);
}
