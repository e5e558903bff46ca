/**
 * A cookies file in the Netscape format (what browser export extensions and
 * yt-dlp write, and what yt-dlp's --cookies reads): comment lines (#), blank
 * lines, and one cookie a line as seven tab-separated fields
 * (domain, include-subdomains, path, secure, expiry, name, value); a
 * `#HttpOnly_` prefix on the domain marks an HttpOnly cookie.
 *
 * A stored file keeps only the cookies of the platform it is stored for, so a
 * file exported from a whole browser never gives the engine another site's
 * session.
 */
import { hostMatchesDomain, type PlatformSite } from "#contract";

export const MAX_COOKIES_BYTES = 100 * 1024;

export type CookiesCheck =
  | { ok: true; text: string; count: number; expiresAt: number | null }
  | { ok: false; problem: string };

const HTTPONLY = "#HttpOnly_";

export function checkCookiesFile(text: string, site: PlatformSite): CookiesCheck {
  const kept: string[] = [];
  let cookies = 0;
  let latest: number | null = null;
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trimEnd();
    if (line === "" || (line.startsWith("#") && !line.startsWith(HTTPONLY))) continue;
    const fields = line.split("\t");
    if (fields.length !== 7) {
      return { ok: false, problem: `Line ${index + 1} is not a Netscape cookie line (seven tab-separated fields: domain, subdomains, path, secure, expiry, name, value).` };
    }
    const [domainField = "", subdomains = "", , secure = "", expiry = ""] = fields;
    if (!/^(TRUE|FALSE)$/i.test(subdomains) || !/^(TRUE|FALSE)$/i.test(secure) || !/^\d+$/.test(expiry)) {
      return { ok: false, problem: `Line ${index + 1} is not a Netscape cookie line (the second and fourth fields are TRUE or FALSE, the fifth an expiry in epoch seconds).` };
    }
    cookies += 1;
    const domain = domainField.replace(HTTPONLY, "").replace(/^\./, "");
    if (!site.domains.some((d) => hostMatchesDomain(domain, d))) continue;
    kept.push(line);
    const expires = Number(expiry);
    if (expires > 0) latest = Math.max(latest ?? 0, expires);
  }
  if (cookies === 0) return { ok: false, problem: "The file has no cookies: export them in the Netscape (cookies.txt) format." };
  if (kept.length === 0) return { ok: false, problem: `None of the file's ${cookies} cookies is for ${site.name} (${site.domains.join(", ")}).` };
  return { ok: true, text: `# Netscape HTTP Cookie File\n${kept.join("\n")}\n`, count: kept.length, expiresAt: latest };
}
