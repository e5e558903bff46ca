/**
 * Where a webhook may be sent. The same host rules as video sources
 * (src/domain/source-url.ts), plus: https only unless ALLOW_PRIVATE_SOURCES
 * (local development) is on. Checked when an endpoint is saved and again
 * before every attempt, since the rules may have tightened in between.
 */
import { DomainError } from "../domain/errors.ts";
import { isPrivateHost } from "../domain/source-url.ts";

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export function allowPrivateDestinations(env: Pick<Env, "ALLOW_PRIVATE_SOURCES">): boolean {
  return env.ALLOW_PRIVATE_SOURCES === "true";
}

/** Why the URL may not receive webhooks, or null when it may. */
export function destinationProblem(raw: string, allowPrivate: boolean): string | null {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return `url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters.`;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return "url is not a valid absolute URL.";
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) return "url must use https.";
  if (url.username !== "" || url.password !== "") return "url must not contain credentials.";
  if (url.hostname === "") return "url has no host.";
  if (!allowPrivate && isPrivateHost(url.hostname)) {
    return "url points to a private, loopback, link-local or metadata address.";
  }
  if (url.toString().length > MAX_WEBHOOK_URL_LENGTH) return `url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters.`;
  return null;
}

/** The normalised URL, or an invalid_webhook_url error saying what is wrong. */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string {
  const problem = destinationProblem(raw, allowPrivate);
  if (problem !== null) throw new DomainError("invalid_webhook_url", problem, { errors: [{ path: "url", message: problem }] });
  return new URL(raw.trim()).toString();
}
