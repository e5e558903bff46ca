/**
 * A failed Workers AI call as the REST API reports it: the HTTP status and
 * the API's own errors ({code, message}), e.g. 429 with 3040 "Out of
 * capacity" or 3036 "Account limited" (developers.cloudflare.com/workers-ai/
 * platform/errors). The message starts "code: message" as the binding's
 * thrown errors do, so logs read the same whichever transport ran.
 */
export interface WorkersAiApiError {
  code: number;
  message: string;
}

export class WorkersAiError extends Error {
  override readonly name = "WorkersAiError";
  constructor(
    readonly status: number,
    readonly errors: WorkersAiApiError[],
    fallback: string,
  ) {
    super(errors.length > 0 ? errors.map((e) => `${e.code}: ${e.message}`).join("; ") : fallback);
  }

  /**
   * Whether trying again can help: rate limits (429), timeouts (408) and the
   * service's own failures (5xx) can; a refused token (401, 403), an unknown
   * model (404, 400 "No such model") or a refused input (400, 413) cannot.
   */
  get retryable(): boolean {
    return this.status === 429 || this.status === 408 || this.status >= 500;
  }
}

/**
 * An error no retry can cure (see WorkersAiError.retryable), or the
 * account-wide budget refusing (budget.ts: the call already waited what it may).
 */
export function isPermanentAiError(err: unknown): boolean {
  if (err instanceof Error && err.name === "AiBudgetExhausted") return true;
  return err instanceof WorkersAiError && !err.retryable;
}
