import type { LiveJobView } from "../account/live-jobs.ts";
import type { PlanLimits } from "../db/plans.ts";

/** Who is calling: set by the auth middleware on every authenticated route. */
export interface AuthInfo {
  accountId: string;
  keyId: string;
  plan: PlanLimits;
}

/** The Hono environment shared by every sub-app of the Worker. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    auth: AuthInfo;
    /** A job read's view from the account's Durable Object (set by the rate limit, src/jobs/read-path.ts). */
    liveJob?: LiveJobView;
  };
}
