import type { components } from "./schema.ts";

export type Problem = components["schemas"]["Problem"];

/** A problem+json answer (or a failure to reach the API) as an exception: `code` and `detail` say what went wrong. */
export class ClipjobsError extends Error {
  override readonly name = "ClipjobsError";

  constructor(
    /** The problem's stable code (see /docs/errors), or `network_error` / `unexpected_response`. */
    readonly code: string,
    readonly detail: string,
    readonly status: number | null,
    readonly problem: Problem | null = null,
  ) {
    super(`${code}: ${detail}`);
  }

  static fromResponse(response: Response, body: unknown): ClipjobsError {
    if (isProblem(body)) return new ClipjobsError(body.code, body.detail, response.status, body);
    return new ClipjobsError("unexpected_response", `HTTP ${response.status} ${response.statusText}`.trim(), response.status);
  }
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== "object" || body === null) return false;
  const candidate = body as Record<string, unknown>;
  return typeof candidate.code === "string" && typeof candidate.detail === "string";
}
