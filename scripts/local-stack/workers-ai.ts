/**
 * How a local stack reaches Workers AI (docs/workers-ai.md): `wrangler dev
 * --local` has no working AI binding, so the Worker is given Workers AI's REST
 * settings from the user's own Cloudflare credentials, under wrangler's names:
 * CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN (a token with the Workers AI
 * permission), and WORKERS_AI_BASE_URL when set (a stand-in server, say).
 * `npm run dev` and `npm run demo` use this; the e2e harness does not, so a
 * test never spends a developer's account.
 */

export interface WorkersAiAccess {
  /** Worker variables to add: WORKERS_AI_ACCOUNT_ID, WORKERS_AI_TOKEN, WORKERS_AI_BASE_URL (or none). */
  vars: Record<string, string>;
  /** One sentence for the start of the run: what is used, or what is missing and what that means. */
  notice: string;
}

export function workersAiAccess(environment: NodeJS.ProcessEnv): WorkersAiAccess {
  const accountId = environment.WORKERS_AI_ACCOUNT_ID?.trim() || environment.CLOUDFLARE_ACCOUNT_ID?.trim() || "";
  const token = environment.WORKERS_AI_TOKEN?.trim() || environment.CLOUDFLARE_API_TOKEN?.trim() || "";
  const baseUrl = environment.WORKERS_AI_BASE_URL?.trim() || "";
  const missing = [accountId ? null : "CLOUDFLARE_ACCOUNT_ID", token ? null : "CLOUDFLARE_API_TOKEN"].filter((name): name is string => name !== null);
  if (missing.length > 0) {
    return {
      vars: {},
      notice:
        `Workers AI: off (${missing.join(" and ")} not set). Speech-to-text, translation and prompt matching by meaning ` +
        "fall back (transcripts only from subtitles or captions_url); set both to use your account (docs/workers-ai.md).",
    };
  }
  return {
    vars: { WORKERS_AI_ACCOUNT_ID: accountId, WORKERS_AI_TOKEN: token, ...(baseUrl ? { WORKERS_AI_BASE_URL: baseUrl } : {}) },
    notice: `Workers AI: on, over its REST API at ${baseUrl || "https://api.cloudflare.com/client/v4"} for account ${accountId.slice(0, 6)}... (billed to that account).`,
  };
}
