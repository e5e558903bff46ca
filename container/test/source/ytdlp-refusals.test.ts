import { chmod, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { JobFailure } from "../../src/shared/errors.ts";
import { publicOnlyPolicy, systemResolver } from "../../src/source/address-policy.ts";
import { PLATFORMS, type Platform } from "../../src/source/platforms.ts";
import { downloadWithYtdlp } from "../../src/source/ytdlp.ts";
import { classifyYtdlpError, platformWords } from "../../src/source/ytdlp-failures.ts";
import { osTempDir, removeTempDirs } from "../helpers/media.ts";

const COOKIE_HINT =
  "Use --cookies-from-browser or --cookies for the authentication. See  https://github.com/yt-dlp/yt-dlp/wiki/FAQ#how-do-i-pass-cookies-to-yt-dlp  for how to manually pass cookies";
const YOUTUBE_COOKIE_HINT = `${COOKIE_HINT}. Also see  https://github.com/yt-dlp/yt-dlp/wiki/Extractors#exporting-youtube-cookies  for tips on effectively exporting YouTube cookies`;

/**
 * yt-dlp's error lines as it prints them (`ERROR: [extractor] id: message`),
 * the message being the platform's words plus yt-dlp's login hint
 * (extractor/common.py _login_hint, youtube/_base.py _youtube_login_hint).
 */
const REAL_MESSAGES: readonly { platform: string; line: string; code: string; words: string }[] = [
  {
    platform: "youtube",
    line: `ERROR: [youtube] dQw4w9WgXcQ: Sign in to confirm you\u2019re not a bot. ${YOUTUBE_COOKIE_HINT}`,
    code: "source_sign_in_required",
    words: "Sign in to confirm you\u2019re not a bot.",
  },
  {
    platform: "youtube",
    line: `ERROR: [youtube] dQw4w9WgXcQ: Join this channel to get access to members-only content like this video, and other exclusive perks.`,
    code: "source_sign_in_required",
    words: "Join this channel to get access to members-only content like this video, and other exclusive perks.",
  },
  {
    platform: "youtube",
    line: `ERROR: [youtube] dQw4w9WgXcQ: Private video. Sign in if you've been granted access to this video. ${YOUTUBE_COOKIE_HINT}`,
    code: "source_private",
    words: "Private video. Sign in if you've been granted access to this video.",
  },
  {
    platform: "youtube",
    line: "ERROR: [youtube] dQw4w9WgXcQ: Video unavailable. This video has been removed by the uploader",
    code: "source_unavailable",
    words: "Video unavailable. This video has been removed by the uploader.",
  },
  {
    platform: "youtube",
    line: "ERROR: [youtube] dQw4w9WgXcQ: The uploader has not made this video available in your country",
    code: "source_geo_blocked",
    words: "The uploader has not made this video available in your country.",
  },
  {
    platform: "dailymotion",
    line: "ERROR: [dailymotion] x8abc: This video is not available from your location due to geo restriction",
    code: "source_geo_blocked",
    words: "This video is not available from your location due to geo restriction.",
  },
  {
    platform: "youtube",
    line: `ERROR: [youtube] dQw4w9WgXcQ: Sign in to confirm your age. This video may be inappropriate for some users. ${YOUTUBE_COOKIE_HINT}`,
    code: "source_age_restricted",
    words: "Sign in to confirm your age. This video may be inappropriate for some users.",
  },
  {
    platform: "youtube",
    line: "ERROR: [youtube] dQw4w9WgXcQ: This live event will begin in 3 hours.",
    code: "source_live",
    words: "This live event will begin in 3 hours.",
  },
  {
    platform: "youtube",
    line: "ERROR: [youtube] dQw4w9WgXcQ: Premieres in 20 minutes",
    code: "source_live",
    words: "Premieres in 20 minutes.",
  },
  {
    platform: "tiktok",
    line: `ERROR: [TikTok] 7300000000000000000: You do not have permission to view this post. Log into an account that has access. ${COOKIE_HINT}`,
    code: "source_private",
    words: "You do not have permission to view this post. Log into an account that has access.",
  },
  {
    platform: "twitch",
    line: "ERROR: [twitch:vod] v123456: Video v123456 does not exist",
    code: "source_unavailable",
    words: "Video v123456 does not exist.",
  },
  {
    platform: "vimeo",
    line: `ERROR: [vimeo] 123456: This video is only available for registered users. ${COOKIE_HINT}`,
    code: "source_sign_in_required",
    words: "This video is only available for registered users.",
  },
];

function platformById(id: string): Platform {
  const platform = PLATFORMS.find((p) => p.id === id);
  if (!platform) throw new Error(`${id} missing from the platform list`);
  return platform;
}

describe("yt-dlp refusal table", () => {
  it.each(REAL_MESSAGES)("$code from: $line", ({ line, code, words }) => {
    // Progress and warnings before the error do not change what it says.
    const output = `[youtube] Extracting URL: https://www.youtube.com/watch?v=dQw4w9WgXcQ\nWARNING: [youtube] Falling back to generic n function search\n${line}`;
    expect(classifyYtdlpError(output)).toEqual({ code, words });
  });

  it("leaves an error it does not recognise to the caller", () => {
    expect(classifyYtdlpError("ERROR: [youtube] x: Unable to download API page: HTTP Error 500: Internal Server Error")).toBeNull();
    expect(classifyYtdlpError("WARNING: nothing went wrong")).toBeNull();
  });

  it("cuts yt-dlp's command-line advice and keeps the platform's words", () => {
    expect(platformWords(`ERROR: [youtube] abc: Sign in to confirm you're not a bot. ${YOUTUBE_COOKIE_HINT}`)).toBe("Sign in to confirm you're not a bot.");
  });
});

describe("a platform download refused by the platform", () => {
  // yt-dlp is not installed here: a stand-in prints each real message to stderr and exits 1, as yt-dlp does.
  async function standIn(dir: string, line: string): Promise<string> {
    const message = path.join(dir, "message.txt");
    await writeFile(message, `[info] Testing\n${line}\n`);
    const script = path.join(dir, "yt-dlp");
    await writeFile(script, `#!/bin/sh\ncat "${message}" >&2\nexit 1\n`);
    await chmod(script, 0o755);
    return script;
  }

  it.each(REAL_MESSAGES)("fails the job with $code quoting the platform ($platform)", async ({ platform: id, line, code, words }) => {
    const dir = await osTempDir("ytdlp-refusal");
    const platform = platformById(id);
    const failure = await downloadWithYtdlp({
      ytdlpPath: await standIn(dir, line),
      url: new URL(`https://${platform.domains[0]}/video/1`),
      platform,
      workDir: dir,
      maxBytes: 1_000_000,
      tooLargeMessage: "too large",
      maxSeconds: 600,
      timeoutMs: 20_000,
      signal: new AbortController().signal,
      policy: publicOnlyPolicy,
      resolver: systemResolver,
    }).then(
      () => {
        throw new Error("expected a failure");
      },
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(JobFailure);
    expect((failure as JobFailure).code).toBe(code);
    expect((failure as JobFailure).message).toContain(`${platform.name} said: \u201c${words}\u201d`);
    expect((failure as JobFailure).message).not.toMatch(/--cookies|github\.com/);
    if (code === "source_sign_in_required") expect((failure as JobFailure).message).toContain(`PUT /api/v1/cookies/${id}`);
  });
});

describe("the account's cookies file", () => {
  const youtube = platformById("youtube");
  const FILE = "# Netscape HTTP Cookie File\n.youtube.com\tTRUE\t/\tTRUE\t4102444800\tSID\tsession-value\n";

  async function run(dir: string, script: string, cookies: string | null) {
    const ytdlp = path.join(dir, "yt-dlp");
    await writeFile(ytdlp, `#!/bin/sh\n${script}\n`);
    await chmod(ytdlp, 0o755);
    return downloadWithYtdlp({
      ytdlpPath: ytdlp,
      url: new URL("https://www.youtube.com/watch?v=dQw4w9WgXcQ"),
      platform: youtube,
      workDir: dir,
      maxBytes: 1_000_000,
      tooLargeMessage: "too large",
      maxSeconds: 600,
      timeoutMs: 20_000,
      signal: new AbortController().signal,
      policy: publicOnlyPolicy,
      resolver: systemResolver,
      cookies,
    }).then(
      () => {
        throw new Error("expected a failure");
      },
      (e: unknown) => e as JobFailure,
    );
  }

  it("reaches yt-dlp as --cookies, a file only the engine's user can read", async () => {
    const dir = await osTempDir("ytdlp-cookies");
    // The stand-in records the file --cookies names, its mode, then refuses as YouTube does.
    const script = [
      `while [ $# -gt 0 ]; do if [ "$1" = "--cookies" ]; then cp "$2" "${dir}/seen.txt"; stat -c %a "$2" > "${dir}/mode.txt"; fi; shift; done`,
      `echo "ERROR: [youtube] dQw4w9WgXcQ: Sign in to confirm you\u2019re not a bot. ${YOUTUBE_COOKIE_HINT}" >&2`,
      "exit 1",
    ].join("\n");
    const failure = await run(dir, script, FILE);
    expect(await readFile(path.join(dir, "seen.txt"), "utf8")).toBe(FILE);
    expect((await readFile(path.join(dir, "mode.txt"), "utf8")).trim()).toBe("600");
    // Signed in and still refused: the message says the stored file did not get through, not to store one.
    expect(failure.code).toBe("source_sign_in_required");
    expect(failure.message).toMatch(/cookies file stored for your account did not get through/);
  });

  it("is not passed when the account has none", async () => {
    const dir = await osTempDir("ytdlp-no-cookies");
    const failure = await run(dir, `printf '%s\\n' "$@" > "${dir}/argv.txt"\necho "ERROR: [youtube] x: Private video. Sign in if you've been granted access to this video" >&2\nexit 1`, null);
    expect(await readFile(path.join(dir, "argv.txt"), "utf8")).not.toContain("--cookies");
    expect(failure.code).toBe("source_private");
  });
});

afterAll(removeTempDirs);
