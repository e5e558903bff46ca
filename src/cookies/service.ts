/**
 * An account's cookies files for the video platforms, shared by the API
 * (/api/v1/cookies/{platform}) and the engine channel's cookies route. The
 * file is sealed before it reaches the database (crypto.ts) and opened only
 * for a job of the same account whose video is on the same platform; it is
 * never logged and never in an API answer (those carry counts and dates).
 */
import { PLATFORM_SITES, platformOfUrl, type PlatformId, type PlatformSite } from "#contract";
import { deleteCookies, findCookies, putCookies, type StoredCookies } from "../db/platform-cookies.ts";
import { DomainError } from "../domain/errors.ts";
import { openCookies, sealCookies } from "./crypto.ts";
import { checkCookiesFile, MAX_COOKIES_BYTES } from "./netscape.ts";

export function siteOf(platform: PlatformId): PlatformSite {
  const site = PLATFORM_SITES.find((s) => s.id === platform);
  if (!site) throw new Error(`no site for platform ${platform}`);
  return site;
}

export function cookiesTooLarge(): DomainError {
  return new DomainError("cookies_too_large", `The cookies file is larger than ${MAX_COOKIES_BYTES} bytes (100 KiB): export only the platform's cookies.`);
}

export async function storeCookies(env: Env, accountId: string, platform: PlatformId, bytes: Uint8Array): Promise<{ created: boolean; cookies: StoredCookies }> {
  if (bytes.byteLength > MAX_COOKIES_BYTES) throw cookiesTooLarge();
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new DomainError("invalid_cookies", "The cookies file is not UTF-8 text.");
  }
  const check = checkCookiesFile(text, siteOf(platform));
  if (!check.ok) throw new DomainError("invalid_cookies", check.problem);
  const sealed = await sealCookies(env, accountId, platform, check.text);
  return putCookies(env.DB, {
    accountId,
    platform,
    sealed,
    cookieCount: check.count,
    sizeBytes: new TextEncoder().encode(check.text).byteLength,
    expiresAt: check.expiresAt,
  });
}

export function removeCookies(env: Env, accountId: string, platform: PlatformId): Promise<boolean> {
  return deleteCookies(env.DB, accountId, platform);
}

/**
 * The cookies file a job may use: its own account's, for the platform of its
 * own video URL. Null for a direct link, an upload, or no stored file.
 */
export async function cookiesForJob(env: Env, job: { accountId: string; videoUrl: string }): Promise<string | null> {
  const site = platformOfUrl(job.videoUrl);
  if (!site) return null;
  const stored = await findCookies(env.DB, job.accountId, site.id);
  if (!stored) return null;
  return openCookies(env, job.accountId, site.id, stored.sealed);
}

export function cookiesToJson(stored: StoredCookies) {
  return {
    platform: stored.platform,
    cookie_count: stored.cookieCount,
    size_bytes: stored.sizeBytes,
    expires_at: stored.expiresAt === null ? null : new Date(stored.expiresAt * 1000).toISOString(),
    created_at: stored.createdAt,
    updated_at: stored.updatedAt,
  };
}
