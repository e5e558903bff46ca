/**
 * The two callbacks of an edit that may be refused without failing it: the
 * account's platform cookies (a download goes on without them) and the
 * caption sidecars (a Worker that does not know their route leaves the clip
 * without them). A 409 (the edit was ended) still stops the edit.
 */
import { log } from "../shared/log.ts";
import { CallbackError, type JobReporter } from "../channel/report.ts";

/** The largest cookies file the Worker stores, with room for its header line. */
const MAX_COOKIES_BYTES = 101 * 1024;

export async function platformCookies(reporter: Pick<JobReporter, "getCookies">, jobId: string): Promise<string | null> {
  try {
    return await reporter.getCookies(MAX_COOKIES_BYTES);
  } catch (error) {
    if (error instanceof CallbackError && error.status !== 409) {
      log.warn("edit_cookies_unavailable", { job_id: jobId, status: error.status });
      return null;
    }
    throw error;
  }
}

/** true when stored; false when the Worker does not know the route (404). */
export async function optionalUpload(jobId: string, upload: () => Promise<void>): Promise<boolean> {
  try {
    await upload();
    return true;
  } catch (error) {
    if (error instanceof CallbackError && error.status === 404) {
      log.warn("edit_optional_upload_refused", { job_id: jobId, error: error.message });
      return false;
    }
    throw error;
  }
}
