import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./app-env.ts";
import { DomainError } from "../domain/errors.ts";
import { AppError, problemBody, problemStatus } from "./errors.ts";

const PROBLEM_CONTENT_TYPE = "application/problem+json";

function requestIdOf(c: Context<AppEnv>): string {
  return c.get("requestId") ?? "unknown";
}

/** Renders a DomainError (or AppError) as problem+json, keeping headers set earlier (Request-Id, RateLimit). */
export function renderProblem(c: Context<AppEnv>, err: DomainError): Response {
  for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
  c.header("Content-Type", PROBLEM_CONTENT_TYPE);
  c.header("Cache-Control", "no-store");
  return c.body(JSON.stringify(problemBody(err, requestIdOf(c))), problemStatus(err) as 400);
}

/** Hono's own exceptions come from its validators and body parsers: all client mistakes. */
function fromHttpException(err: HTTPException): AppError {
  if (err.status === 413) return new AppError("payload_too_large", "The request body is too large.");
  if (err.status === 415) return new AppError("unsupported_media_type", "Unsupported Content-Type.");
  if (err.status >= 400 && err.status < 500) {
    return new AppError("invalid_request", err.message || "The request is invalid.");
  }
  return new AppError("internal_error", "An unexpected error occurred.");
}

/**
 * A platform error a Durable Object call throws (its code being updated, the
 * object moving or overloaded) carries `.retryable` or `.overloaded`: the
 * runtime already retried what it could, and the request may succeed later.
 * That is a 503 with Retry-After, not a bug (500). An overloaded object is
 * given longer before the client comes back.
 */
export function transientPlatformError(err: unknown): AppError | null {
  if (!(err instanceof Error)) return null;
  const flags = err as Error & { retryable?: unknown; overloaded?: unknown };
  if (flags.overloaded === true) {
    return new AppError("service_unavailable", "The service is busy; retry shortly.", { headers: { "Retry-After": "10" } });
  }
  if (flags.retryable === true) {
    return new AppError("service_unavailable", "The service is briefly unavailable; retry shortly.", { headers: { "Retry-After": "2" } });
  }
  return null;
}

export const handleError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof DomainError) {
    if (problemStatus(err) >= 500) console.error(`[${requestIdOf(c)}] ${err.code}: ${err.message}`);
    return renderProblem(c, err);
  }
  if (err instanceof HTTPException) return renderProblem(c, fromHttpException(err));
  const transient = transientPlatformError(err);
  if (transient) {
    console.warn(`[${requestIdOf(c)}] transient platform error`, err);
    return renderProblem(c, transient);
  }
  // Anything else is a bug: log it with the request id, answer without details.
  console.error(`[${requestIdOf(c)}] unhandled error`, err);
  return renderProblem(c, new AppError("internal_error", "An unexpected error occurred."));
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) =>
  renderProblem(c, new AppError("not_found", `No route for ${c.req.method} ${c.req.path}.`));
