import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findYtdlp } from "../../src/shared/config.ts";
import { JobFailure } from "../../src/shared/errors.ts";
import { publicOnlyPolicy, systemResolver } from "../../src/source/address-policy.ts";
import { fetchSource, type FetchSourceRequest } from "../../src/source/index.ts";
import { PLATFORMS, classifySourceUrl } from "../../src/source/platforms.ts";
import { buildYtdlpArgs, downloadWithYtdlp } from "../../src/source/ytdlp.ts";
import { makeTinyVideo, osTempDir, removeTempDirs } from "../helpers/media.ts";

function platformOf(url: string): string | null {
  const match = classifySourceUrl(new URL(url));
  return match.kind === "platform" ? match.platform.name : null;
}

describe("platform URL mapping", () => {
  it.each([
    ["https://www.youtube.com/watch?v=abc", "YouTube"],
    ["https://youtu.be/abc", "YouTube"],
    ["https://m.youtube.com/shorts/abc", "YouTube"],
    ["https://vimeo.com/123", "Vimeo"],
    ["https://player.vimeo.com/video/123", "Vimeo"],
    ["https://www.tiktok.com/@a/video/1", "TikTok"],
    ["https://www.twitch.tv/videos/1", "Twitch"],
    ["https://clips.twitch.tv/x", "Twitch"],
    ["https://dai.ly/x", "Dailymotion"],
    ["https://streamable.com/x", "Streamable"],
  ])("%s goes to yt-dlp as %s", (url, name) => {
    expect(platformOf(url)).toBe(name);
  });

  it.each(["https://notyoutube.com/watch", "https://youtube.com.evil.example/v.mp4", "https://cdn.example.com/v.mp4", "http://127.0.0.1/v.mp4"])(
    "%s is a direct link",
    (url) => {
      expect(classifySourceUrl(new URL(url)).kind).toBe("direct");
    },
  );

  it("names DRM video sites as unsupported", () => {
    expect(classifySourceUrl(new URL("https://www.netflix.com/watch/1"))).toEqual({ kind: "unsupported", site: "netflix.com" });
  });

  it("gives every platform at least one extractor", () => {
    for (const platform of PLATFORMS) expect(platform.extractors.length).toBeGreaterThan(0);
  });
});

describe("yt-dlp arguments", () => {
  const platform = PLATFORMS.find((p) => p.name === "YouTube");
  if (!platform) throw new Error("YouTube missing from the platform list");

  it("downloads one video with only the platform's extractors, capped, into the work dir", () => {
    const args = buildYtdlpArgs({
      url: new URL("https://youtu.be/abc?list=PL1"),
      platform,
      workDir: "/work/job_1",
      maxBytes: 12345,
      maxSeconds: 600,
      proxyUrl: "http://127.0.0.1:4567",
    });
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    expect(args).toContain("--no-playlist");
    expect(args).toContain("--ignore-config");
    expect(after("--use-extractors")).toBe("youtube");
    expect(after("--max-filesize")).toBe("12345");
    expect(after("--paths")).toBe("/work/job_1");
    expect(after("--merge-output-format")).toBe("mp4");
    expect(after("-f")).toMatch(/height<=1080/);
    // Every connection through the engine's egress proxy; long videos and live streams refused from the metadata.
    expect(after("--proxy")).toBe("http://127.0.0.1:4567");
    expect(after("--match-filter")).toBe("!is_live & duration <=? 600");
    // The URL is the last argument, after "--", so it can never be read as an option.
    expect(args.at(-2)).toBe("--");
    expect(args.at(-1)).toBe("https://youtu.be/abc?list=PL1");
  });

  it("keeps a URL that looks like an option after the terminator", () => {
    const args = buildYtdlpArgs({ url: new URL("https://youtube.com/--exec=rm"), platform, workDir: "/w", maxBytes: 1, maxSeconds: 1, proxyUrl: "http://127.0.0.1:1" });
    expect(args.indexOf("--")).toBe(args.length - 2);
  });
});

describe("yt-dlp availability", () => {
  function request(overrides: Partial<FetchSourceRequest>): FetchSourceRequest {
    return {
      videoUrl: "https://www.youtube.com/watch?v=abc",
      limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 60 },
      allowPrivateHosts: false,
      backendMaxBytes: Number.MAX_SAFE_INTEGER,
      backendName: "native",
      workDir: "/nonexistent",
      destPath: "/nonexistent/source",
      ytdlpPath: null,
      stallTimeoutMs: 1000,
      maxRedirects: 5,
      signal: new AbortController().signal,
      onProgress: () => undefined,
      ...overrides,
    };
  }

  it("fails a platform URL with unsupported_platform when yt-dlp is not installed", async () => {
    const error = await fetchSource(request({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailure);
    expect((error as JobFailure).code).toBe("unsupported_platform");
    expect((error as JobFailure).message).toMatch(/YouTube links need the platform downloader \(yt-dlp\)/);
  });

  it("fails a DRM site with unsupported_platform", async () => {
    const error = await fetchSource(request({ videoUrl: "https://www.netflix.com/watch/1" })).catch((e: unknown) => e);
    expect((error as JobFailure).code).toBe("unsupported_platform");
  });

  it("finds yt-dlp through YTDLP_PATH or PATH, and only when executable", async () => {
    const dir = await osTempDir("ytdlp");
    const fake = path.join(dir, "yt-dlp");
    await writeFile(fake, "#!/bin/sh\nexit 0\n");
    expect(findYtdlp({ PATH: dir })).toBeNull();
    await chmod(fake, 0o755);
    expect(findYtdlp({ PATH: `/nonexistent:${dir}` })).toBe(fake);
    expect(findYtdlp({ PATH: dir, YTDLP_PATH: "" })).toBeNull();
    expect(findYtdlp({ PATH: "", YTDLP_PATH: fake })).toBe(fake);
    expect(findYtdlp({ PATH: "/nonexistent" })).toBeNull();
  });
});

describe("yt-dlp download", () => {
  // yt-dlp is not installed here and there is no internet: a stand-in script
  // plays its part (writes the video and its info JSON where it was told to).
  async function standIn(dir: string, body: string): Promise<string> {
    const script = path.join(dir, "yt-dlp");
    await writeFile(script, `#!/bin/sh\nprintf '%s\\n' "$@" > "${dir}/argv.txt"\n${body}\n`);
    await chmod(script, 0o755);
    return script;
  }
  const platform = PLATFORMS.find((p) => p.name === "Vimeo");
  if (!platform) throw new Error("Vimeo missing from the platform list");

  it("returns the downloaded file, its size and the platform's title, with progress from its output", async () => {
    const dir = await osTempDir("ytdlp-run");
    const work = path.join(dir, "work");
    const video = path.join(dir, "tiny.mp4");
    await makeTinyVideo(video, 1);
    const script = await standIn(
      dir,
      [
        `cp "${video}" "${work}/source.mp4"`,
        `printf '{"title": "Platform Title"}' > "${work}/source.info.json"`,
        `echo "[download]  42.0% of 1.00MiB"`,
        `echo "[download] 100.0% of 1.00MiB"`,
      ].join("\n"),
    );
    await mkdir(work, { recursive: true });
    const seen: number[] = [];
    const result = await downloadWithYtdlp({
      ytdlpPath: script,
      url: new URL("https://vimeo.com/123"),
      platform,
      workDir: work,
      maxBytes: 10_000_000,
      tooLargeMessage: "too large",
      maxSeconds: 600,
      timeoutMs: 20_000,
      signal: new AbortController().signal,
      policy: publicOnlyPolicy,
      resolver: systemResolver,
      onProgress: (f) => seen.push(f),
    });
    expect(result.path).toBe(path.join(work, "source.mp4"));
    expect(result.title).toBe("Platform Title");
    expect(result.bytes).toBeGreaterThan(0);
    expect(seen).toEqual([0.42, 1]);
    const argv = (await readFile(path.join(dir, "argv.txt"), "utf8")).trim().split("\n");
    expect(argv.at(-1)).toBe("https://vimeo.com/123");
    expect(argv[argv.indexOf("--use-extractors") + 1]).toBe("vimeo,vimeo:player");
  });

  it("maps a failed or oversized download to a failure code", async () => {
    const dir = await osTempDir("ytdlp-fail");
    const failing = await standIn(dir, `echo "ERROR: [vimeo] 123: Unable to download JSON metadata: HTTP Error 500: Internal Server Error" >&2\nexit 1`);
    const common = {
      url: new URL("https://vimeo.com/123"),
      platform,
      workDir: dir,
      maxBytes: 1000,
      tooLargeMessage: "The video is larger than the limit.",
      maxSeconds: 600,
      timeoutMs: 20_000,
      signal: new AbortController().signal,
      policy: publicOnlyPolicy,
      resolver: systemResolver,
    };
    const unreachable = await downloadWithYtdlp({ ...common, ytdlpPath: failing }).then(
      () => {
        throw new Error("expected a failure");
      },
      (e: unknown) => e as JobFailure,
    );
    expect(unreachable.code).toBe("source_unreachable");
    expect(unreachable.message).toMatch(/HTTP Error 500/);
    const big = await standIn(dir, `echo "[download] File is larger than max-filesize (5000 bytes > 1000 bytes). Aborting."`);
    const tooLarge = await downloadWithYtdlp({ ...common, ytdlpPath: big }).then(
      () => {
        throw new Error("expected a failure");
      },
      (e: unknown) => e as JobFailure,
    );
    expect(tooLarge.code).toBe("source_too_large");
  });
});

afterAll(removeTempDirs);
