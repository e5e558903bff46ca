/**
 * The video platforms whose links the engine downloads with yt-dlp, by the
 * id the API names them with (/api/v1/cookies/{platform}). Both sides read
 * it: the engine to pick the downloader and its extractors, the Worker to
 * know which of an account's stored cookies files a job may have.
 */
export const PLATFORM_IDS = ["youtube", "vimeo", "tiktok", "twitch", "dailymotion", "streamable"] as const;
export type PlatformId = (typeof PLATFORM_IDS)[number];

export interface PlatformSite {
  id: PlatformId;
  name: string;
  /** Registrable domains; any subdomain matches too. */
  domains: string[];
}

export const PLATFORM_SITES: readonly PlatformSite[] = [
  { id: "youtube", name: "YouTube", domains: ["youtube.com", "youtu.be", "youtube-nocookie.com"] },
  { id: "vimeo", name: "Vimeo", domains: ["vimeo.com"] },
  { id: "tiktok", name: "TikTok", domains: ["tiktok.com"] },
  { id: "twitch", name: "Twitch", domains: ["twitch.tv"] },
  { id: "dailymotion", name: "Dailymotion", domains: ["dailymotion.com", "dai.ly"] },
  { id: "streamable", name: "Streamable", domains: ["streamable.com"] },
];

export function isPlatformId(value: string): value is PlatformId {
  return (PLATFORM_IDS as readonly string[]).includes(value);
}

export function hostMatchesDomain(hostname: string, domain: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return host === domain || host.endsWith(`.${domain}`);
}

/** The platform a video URL belongs to, or null for a direct link (or no URL at all). */
export function platformOfUrl(videoUrl: string): PlatformSite | null {
  let host: string;
  try {
    host = new URL(videoUrl).hostname;
  } catch {
    return null;
  }
  return PLATFORM_SITES.find((site) => site.domains.some((d) => hostMatchesDomain(host, d))) ?? null;
}
