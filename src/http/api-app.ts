/**
 * Building blocks of the documented API: every public sub-app is an
 * `apiApp()` and every operation an `apiRoute()`, so that validation, the
 * handler's response types and the OpenAPI document come from one object.
 */
import { createRoute, OpenAPIHono, type RouteConfig, type z } from "@hono/zod-openapi";
import type { AppEnv } from "./app-env.ts";
import { ERROR_CODES, type ErrorCode } from "./errors.ts";
import { rejectInvalid } from "./validate.ts";

/** An OpenAPIHono whose validation failures are the project's problem+json 400. */
export function apiApp(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: (result) => rejectInvalid(result) });
}

/** `content` of a JSON request or response body. */
export function jsonContent<T extends z.ZodType>(schema: T) {
  return { "application/json": { schema } };
}

/** Every failure any keyed route can answer, on top of its own. */
export const AUTHENTICATED_ERRORS: readonly ErrorCode[] = ["unauthorized", "rate_limited", "internal_error", "service_unavailable"];
/** What the JSON body guard answers for any route that takes (or may be sent) a body. */
export const BODY_ERRORS: readonly ErrorCode[] = ["invalid_request", "payload_too_large", "unsupported_media_type"];

// A type, not an interface: the OpenAPI header type carries an index signature for x- extensions.
type HeaderDoc = {
  description: string;
  schema: { type: "string" | "integer"; minimum?: number };
};

/** Response headers, registered once as components by the document builder and referenced by every response. */
export const HEADER_COMPONENTS = {
  "Request-Id": { description: "Identifies the request in logs and problem documents", schema: { type: "string" } },
  "RateLimit-Policy": { description: 'The request window, e.g. "default";q=60;w=60', schema: { type: "string" } },
  RateLimit: { description: 'What is left of it, e.g. "default";r=59;t=60', schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 0 } },
} satisfies Record<string, HeaderDoc>;

type HeaderName = keyof typeof HEADER_COMPONENTS;
type HeaderRefs = Partial<Record<HeaderName, { $ref: string }>>;

function headerRefs(names: readonly HeaderName[]): HeaderRefs {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

const REQUEST_ID_HEADERS: readonly HeaderName[] = ["Request-Id"];
const RATE_LIMIT_HEADERS: readonly HeaderName[] = ["Request-Id", "RateLimit-Policy", "RateLimit"];

/** Name of the shared problem+json component (registered by the document builder). */
export const PROBLEM_COMPONENT = "Problem";

function problemSchema(codes: readonly ErrorCode[] | null) {
  const ref = { $ref: `#/components/schemas/${PROBLEM_COMPONENT}` };
  return codes === null ? ref : { allOf: [ref, { type: "object" as const, properties: { code: { enum: [...codes] } } }] };
}

/**
 * One response per status among `codes`, each a Problem whose `code` is one
 * of that status's codes. An operation with no client error of its own (an
 * unauthenticated read) still gets a `4XX` entry: clients can then treat
 * every operation's client errors alike, and the document says they are
 * problem+json.
 */
function problemResponses(codes: readonly ErrorCode[], headers: readonly HeaderName[]): RouteConfig["responses"] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: RouteConfig["responses"] = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retryable = status === 429 || status === 503;
    responses[status] = {
      description: statusCodes.map((code) => `- \`${code}\`: ${ERROR_CODES[code].meaning}`).join("\n"),
      headers: headerRefs(retryable ? [...headers, "Retry-After"] : headers),
      content: { "application/problem+json": { schema: problemSchema(statusCodes) } },
    };
  }
  if (![...byStatus.keys()].some((status) => status >= 400 && status < 500)) {
    responses["4XX"] = {
      description: "Any client error, as problem+json (see /docs/errors); none is expected for this operation.",
      headers: headerRefs(headers),
      content: { "application/problem+json": { schema: problemSchema(null) } },
    };
  }
  return responses;
}

/** A success's own header map joins the shared headers (a zod object of headers replaces them, as declared). */
function withSharedHeaders(response: RouteConfig["responses"][string], names: readonly HeaderName[]) {
  const own = "headers" in response ? response.headers : undefined;
  if (own !== undefined && "_zod" in own) return response;
  return { ...response, headers: { ...headerRefs(names), ...own } };
}

export interface ProblemDocs {
  /** The problem codes this operation answers besides the common ones (401/429/500 for keyed routes). */
  errors: readonly ErrorCode[];
  /** false: answers without an API key (health, this document). */
  authenticated?: false;
}

/**
 * createRoute() plus what every operation of this API shares: its problem
 * responses (from `errors` and the common ones), the Request-Id and RateLimit
 * headers on every response, and `security: []` for unauthenticated routes.
 * The returned route keeps the declared success responses' types, so
 * handlers are checked against them.
 */
export function apiRoute<const R extends RouteConfig>(route: R, { errors, authenticated }: ProblemDocs): R {
  const keyed = authenticated !== false;
  const headers = keyed ? RATE_LIMIT_HEADERS : REQUEST_ID_HEADERS;
  const successes = Object.fromEntries(Object.entries(route.responses).map(([status, response]) => [status, withSharedHeaders(response, headers)]));
  const common: ErrorCode[] = keyed ? [...AUTHENTICATED_ERRORS] : ["internal_error", "service_unavailable"];
  return createRoute({
    ...route,
    ...(keyed ? {} : { security: [] }),
    responses: { ...successes, ...problemResponses([...errors, ...common], headers) },
  } as unknown as R);
}
