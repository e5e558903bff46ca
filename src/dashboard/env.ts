import type { AppEnv } from "../http/app-env.ts";

/** The signed-in visitor, as the session middleware found them. */
export interface DashboardSession {
  tokenHash: string;
  accountId: string;
  email: string;
  /** Synchronizer token of this session: every form of a signed-in page carries it. */
  csrfToken: string;
}

/** The Hono environment of every dashboard sub-app. */
export interface DashboardEnv {
  Bindings: Env;
  Variables: AppEnv["Variables"] & {
    /** Nonce of this response's inline <style> and <script> (Content-Security-Policy). */
    nonce: string;
    session: DashboardSession | null;
  };
}
