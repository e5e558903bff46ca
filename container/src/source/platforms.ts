/**
 * Video platforms the engine downloads through yt-dlp. A URL goes to yt-dlp
 * only when its host is listed here, and yt-dlp is then limited to that
 * platform's extractors, so it can never be steered at an arbitrary host.
 */
export interface Platform {
  name: string;
  /** Registrable domains; any subdomain matches too. */
  domains: string[];
  /** yt-dlp extractor names for --use-extractors (regexes matched against lower-cased names). */
  extractors: string[];
}

export const PLATFORMS: readonly Platform[] = [
  { name: "YouTube", domains: ["youtube.com", "youtu.be", "youtube-nocookie.com"], extractors: ["youtube"] },
  { name: "Vimeo", domains: ["vimeo.com"], extractors: ["vimeo", "vimeo:player"] },
  { name: "TikTok", domains: ["tiktok.com"], extractors: ["tiktok", "vm\\.tiktok"] },
  { name: "Twitch", domains: ["twitch.tv"], extractors: ["twitch:vod", "twitch:clips"] },
  { name: "Dailymotion", domains: ["dailymotion.com", "dai.ly"], extractors: ["dailymotion"] },
  { name: "Streamable", domains: ["streamable.com"], extractors: ["streamable"] },
];

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

function hostMatches(hostname: string, domain: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return host === domain || host.endsWith(`.${domain}`);
}

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
