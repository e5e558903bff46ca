import { PLATFORM_SITES, hostMatchesDomain, type PlatformId, type PlatformSite } from "#contract";

/**
 * Video platforms the engine downloads through yt-dlp. A URL goes to yt-dlp
 * only when its host is listed here, and yt-dlp is then limited to that
 * platform's extractors, so it can never be steered at an arbitrary host.
 */
export interface Platform extends PlatformSite {
  /** yt-dlp extractor names for --use-extractors (regexes matched against lower-cased names). */
  extractors: string[];
}

/** yt-dlp extractors of each platform of the contract's list. */
const EXTRACTORS: Record<PlatformId, string[]> = {
  youtube: ["youtube"],
  vimeo: ["vimeo", "vimeo:player"],
  tiktok: ["tiktok", "vm\\.tiktok"],
  twitch: ["twitch:vod", "twitch:clips"],
  dailymotion: ["dailymotion"],
  streamable: ["streamable"],
};

export const PLATFORMS: readonly Platform[] = PLATFORM_SITES.map((site) => ({ ...site, extractors: EXTRACTORS[site.id] }));

/** Video sites whose content is DRM-protected or otherwise not downloadable. */
const UNSUPPORTED_VIDEO_SITES: readonly string[] = [
  "netflix.com",
  "primevideo.com",
  "hulu.com",
  "disneyplus.com",
  "max.com",
  "hbomax.com",
  "peacocktv.com",
  "paramountplus.com",
  "tv.apple.com",
];

const hostMatches = hostMatchesDomain;

export type PlatformMatch =
  | { kind: "platform"; platform: Platform }
  | { kind: "unsupported"; site: string }
  | { kind: "direct" };

export function classifySourceUrl(url: URL): PlatformMatch {
  for (const platform of PLATFORMS) {
    if (platform.domains.some((d) => hostMatches(url.hostname, d))) return { kind: "platform", platform };
  }
  const site = UNSUPPORTED_VIDEO_SITES.find((d) => hostMatches(url.hostname, d));
  if (site) return { kind: "unsupported", site };
  return { kind: "direct" };
}
