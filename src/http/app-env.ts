import type { PlanLimits } from "../db/plans";

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
  };
}
