import type { FailureCode } from "#contract";

/**
 * What a platform answered, read from yt-dlp's error line, turned into a
 * failure code. yt-dlp prints an extractor's refusal as
 * `ERROR: [extractor] video_id: <message>`, where the message is mostly the
 * platform's own words (YouTube's playability "reason"/"subreason", TikTok's
 * and Twitch's API errors) followed by yt-dlp's advice for its command line
 * ("Use --cookies-from-browser or --cookies ...", links to its wiki), which
 * means nothing to someone who submitted a link to a web service and is cut.
 *
 * The patterns come from yt-dlp's extractors (youtube/_video.py's
 * playability handling and _is_agegated, common.py's raise_login_required and
 * raise_geo_restricted defaults, tiktok.py, twitch.py, vimeo.py) and from the
 * messages users quote on its tracker. They are checked in table order: age
 * before sign-in, because YouTube's age gate also says "Sign in".
 */
export interface PlatformRefusal {
  code: FailureCode;
  /** The platform's words, without yt-dlp's prefix and command-line advice. */
  words: string;
}

interface RefusalRule {
  code: FailureCode;
  patterns: RegExp[];
}

const RULES: readonly RefusalRule[] = [
  {
    code: "source_age_restricted",
    patterns: [/confirm your age/i, /age[- ]restricted/i, /inappropriate for some users/i, /age_verification_required|age_check_required/i],
  },
  {
    code: "source_geo_blocked",
    patterns: [
      /not made this video available in your country/i,
      /not available from your location/i,
      /geo[- ]?restrict/i,
      /not available in your (country|region)/i,
    ],
  },
  {
    code: "source_live",
    patterns: [/live event will begin in/i, /premieres? in\b/i, /live (stream|event) (has not|hasn't) (started|begun)/i, /waiting for (the )?(live|premiere)/i],
  },
  {
    code: "source_private",
    patterns: [/private video/i, /video is private/i, /do not have permission to view this post/i, /this post is private/i],
  },
  {
    code: "source_sign_in_required",
    patterns: [
      /not a bot/i,
      /sign in to confirm/i,
      /captcha/i,
      /members-only/i,
      /only available for registered users/i,
      /login details are needed|login required|log in(to)? (to|an account)/i,
      /must be logged into/i,
      /only available to (subscribers|members)/i,
      /only works when logged-in/i,
      /ip address is blocked/i,
    ],
  },
  {
    code: "source_unavailable",
    patterns: [
      /video unavailable/i,
      /video is unavailable/i,
      /video (is )?not available/i,
      /has been removed/i,
      /no longer available/i,
      /account associated with this video has been terminated/i,
      /does not exist/i,
      /livestream has ended/i,
      /HTTP Error 404/i,
    ],
  },
];

/** yt-dlp's own advice, appended to the platform's words: cut from the first of these. */
const YTDLP_ADVICE = [
  /\s*Use --cookies/i,
  /\s*Use --username/i,
  /\s*Use a VPN/i,
  /\s*You might want to use a VPN/i,
  /\s*See {1,2}https?:\/\//i,
  /\s*Also see {1,2}https?:\/\//i,
  /\s*It is recommended to use `-t sleep`/i,
  /;\s*please report this issue/i,
  /\s*Confirm you are on the latest version/i,
];

const ERROR_LINE = /^ERROR:\s*(?:\[[^\]]+\]\s*)?(?:[^\s:]+:\s+)?(.*)$/;

/** The platform's words from one of yt-dlp's ERROR lines, or null when the line is not one. */
export function platformWords(line: string): string | null {
  const match = ERROR_LINE.exec(line.trim());
  if (!match?.[1]) return null;
  let words = match[1];
  for (const advice of YTDLP_ADVICE) {
    const at = words.search(advice);
    if (at >= 0) words = words.slice(0, at);
  }
  words = words.trim().replace(/[\s.]*$/, "");
  if (words === "") return null;
  return `${words.slice(0, 300)}.`;
}

/** The last ERROR line of yt-dlp's output classified, or null when nothing in it is recognised. */
export function classifyYtdlpError(output: string): PlatformRefusal | null {
  const errors = output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("ERROR:"));
  for (const line of errors.reverse()) {
    const words = platformWords(line);
    if (!words) continue;
    const rule = RULES.find((r) => r.patterns.some((p) => p.test(line)));
    if (rule) return { code: rule.code, words };
  }
  return null;
}

/** What the person who submitted the link can do, by code. */
export function refusalAdvice(code: FailureCode, platformName: string, platformId: string): string {
  switch (code) {
    case "source_sign_in_required":
      return `${platformName} asked for a signed-in session, as it often does for downloads from data-centre addresses. A ${platformName} cookies file stored for your account (PUT /api/v1/cookies/${platformId}) would let the download sign in.`;
    case "source_age_restricted":
      return `A ${platformName} cookies file of an account allowed to watch it (PUT /api/v1/cookies/${platformId}) would let the download through.`;
    case "source_geo_blocked":
      return `The engine downloads from a country where ${platformName} does not show it; the service's operator can route platform downloads through a proxy elsewhere.`;
    case "source_live":
      return "Submit it again once the live event has ended.";
    case "source_private":
      return `Only people the uploader shares it with can see it; a ${platformName} cookies file of such an account (PUT /api/v1/cookies/${platformId}) would let the download through.`;
    default:
      return "";
  }
}
