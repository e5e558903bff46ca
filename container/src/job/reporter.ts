import type { StartJob } from "#contract";
import { JobReporter } from "../channel/report.ts";
import { JobAborted, abortKindOf } from "../shared/errors.ts";
import type { JobDeps } from "./context.ts";

/**
 * The reporter a job or a clip edit talks to the Worker through. A 409 from
 * the Worker (the job is no longer this engine's) aborts the work as
 * `inactive`; a cancel silences the reporter at once, even mid-request, while
 * a shutdown leaves it able to send the `interrupted` report.
 */
export function jobReporter(job: StartJob, config: JobDeps["config"], controller: AbortController): JobReporter {
  const signal = controller.signal;
  const reporter = new JobReporter({
    callbackBase: config.callbackBase,
    jobId: job.job_id,
    token: job.token,
    attempts: config.callbackAttempts,
    retryBaseMs: config.callbackRetryBaseMs,
    timeoutMs: config.callbackTimeoutMs,
    onInactive: () => controller.abort(new JobAborted("inactive")),
  });
  signal.addEventListener("abort", () => {
    if (abortKindOf(signal) !== "shutdown") reporter.silenceNow();
  });
  return reporter;
}
