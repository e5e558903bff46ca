import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assFilter, buildAss, escapeAssText } from "../../src/captions/ass.ts";
import { captionMetrics, clipWords, layoutPages } from "../../src/captions/layout.ts";
import { buildSrt, buildVtt } from "../../src/captions/sidecar.ts";
import { publicOnlyPolicy, systemResolver, type AddressPolicy } from "../../src/source/address-policy.ts";
import { buildTranscript, sentencesFromWords, stitchChunks, wordsFromCues } from "../../src/transcript/build.ts";
import { fetchCaptionsUrl } from "../../src/transcript/captions-url.ts";
import { CaptionsParseError, MAX_CAPTIONS_BYTES, MAX_CUES, decodeCaptionBytes, parseCaptions } from "../../src/transcript/cues.ts";
import { failureOf } from "../helpers/failure.ts";
import { FFMPEG, nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { probeSource } from "../../src/source/probe.ts";
import { subtitleTrackCues } from "../../src/transcript/track.ts";
import { buildClipArgs } from "../../src/render/index.ts";
import { ClipConfig } from "#contract";
import { runProcess } from "../../src/shared/spawn.ts";
import { startRecordingServer, type RecordingServer } from "../helpers/servers.ts";

/**
 * Subtitle input the engine does not control (a captions_url, a track in an
 * uploaded file, platform subtitles): every hostile shape has one documented
 * outcome (parsed, or refused with a CaptionsParseError saying why) and none
 * crashes the engine or leaks markup into captions.
 */
function parseError(input: string | Uint8Array): string {
  try {
    if (typeof input === "string") parseCaptions(input);
    else parseCaptions(decodeCaptionBytes(input));
  } catch (error) {
    expect(error).toBeInstanceOf(CaptionsParseError);
    return (error as Error).message;
  }
  throw new Error("expected a CaptionsParseError");
}

const SRT = "1\n00:00:01,000 --> 00:00:03,500\nHello <i>there</i>, world.\n\n2\n00:00:04,000 --> 00:00:06,000\nHow are\nyou &amp; yours?\n";
const VTT = "WEBVTT - title\n\nNOTE a comment\n\nintro\n00:01.000 --> 00:03.000 align:start\n<v Ana>Good <b>morning</b>.\n\n00:00:04.000 --> 00:00:05.500\n<00:04.500>Second cue\n";

describe("subtitle parsing", () => {
  it("reads SubRip and WebVTT into plain timed cues", () => {
    expect(parseCaptions(SRT)).toEqual({
      format: "srt",
      cues: [
        { start: 1, end: 3.5, text: "Hello there, world." },
        { start: 4, end: 6, text: "How are you & yours?" },
      ],
    });
    expect(parseCaptions(VTT)).toEqual({
      format: "vtt",
      cues: [
        { start: 1, end: 3, text: "Good morning.", speaker: "Ana" },
        { start: 4, end: 5.5, text: "Second cue" },
      ],
    });
  });

  it("accepts CRLF, a UTF-8 BOM and UTF-16 with a BOM", () => {
    const crlf = SRT.replace(/\n/g, "\r\n");
    expect(parseCaptions(decodeCaptionBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(crlf)]))).cues).toHaveLength(2);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SRT, "utf16le")]);
    expect(parseCaptions(decodeCaptionBytes(utf16)).cues[1]!.text).toBe("How are you & yours?");
  });

  it("refuses bad encodings instead of guessing", () => {
    const latin1 = Buffer.from("1\n00:00:01,000 --> 00:00:02,000\nCaf\xe9\n", "latin1");
    expect(parseError(latin1)).toMatch(/not valid UTF-8/);
    expect(parseError(Buffer.from([0x00, 0x01, 0x02, 0xff, 0xd8]))).toMatch(/UTF-8|NUL/);
    expect(parseError(Buffer.from("1\n00:00:01,000 --> 00:00:02,000\nA\u0000B\n"))).toMatch(/NUL/);
  });

  it("refuses a file over the size cap and one with more cues than the cap", () => {
    expect(parseError(new Uint8Array(MAX_CAPTIONS_BYTES + 1))).toMatch(/larger than 5 MiB/);
    const many: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const t = (s: number) => new Date(s * 1000).toISOString().slice(11, 23).replace(".", ",");
      many.push(`${i + 1}\n${t(i * 0.5)} --> ${t(i * 0.5 + 0.4)}\nw${i}`);
    }
    const started = Date.now();
    expect(parseError(many.join("\n\n"))).toBe(`The captions file has more than ${MAX_CUES} cues.`);
    // Refusing is cheap: no quadratic work on hostile input.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("refuses negative times, reversed cues and malformed blocks", () => {
    expect(parseError("1\n-00:00:01,000 --> 00:00:02,000\nx\n")).toMatch(/negative/);
    expect(parseError("WEBVTT\n\n00:05.000 --> 00:04.000\nx\n")).toMatch(/ends .* before it starts/);
    expect(parseError("1\n00:00:01,000 --> soon\nx\n")).toMatch(/malformed timing/);
    expect(parseError("just some text\nwith no times\n")).toMatch(/without a timing line/);
    expect(parseError("1\n00:00:01,000 --> 00:00:02,000\n\n")).toMatch(/no cues with text/);
    expect(parseError("1\n00:00:01,000 --> 00:99:02,000\nx\n")).toMatch(/impossible time/);
    expect(parseError("")).toMatch(/no cues/);
  });

  it("orders overlapping cues and never lets words go back in time", () => {
    const overlapping = "1\n00:00:05,000 --> 00:00:09,000\nlater words here\n\n2\n00:00:01,000 --> 00:00:06,000\nfirst cue overlaps\n";
    const cues = parseCaptions(overlapping).cues;
    expect(cues.map((c) => c.start)).toEqual([1, 5]);
    const words = wordsFromCues(cues, 60);
    expect(words.map((w) => w.text).join(" ")).toBe("first cue overlaps later words here");
    for (let i = 1; i < words.length; i++) expect(words[i]!.start).toBeGreaterThanOrEqual(words[i - 1]!.end - 1e-9);
  });

  it("strips ASS override tags, \\N and \\h, HTML tags and bidi controls from cue text", () => {
    const hostile = "1\n00:00:01,000 --> 00:00:03,000\n{\\an8}{\\pos(10,10)\\fs200}Big\\Ntext\\hhere <font color=red>red</font> \u202egnirts\u202c\n";
    expect(parseCaptions(hostile).cues[0]!.text).toBe("Big text here red gnirts");
  });

  it("drops the repeated line of rolling auto-captions", () => {
    const rolling = "WEBVTT\n\n00:00.000 --> 00:02.000\nhello there\n\n00:02.000 --> 00:04.000\nhello there\ngeneral kenobi\n";
    const words = wordsFromCues(parseCaptions(rolling).cues, 10);
    expect(words.map((w) => w.text)).toEqual(["hello", "there", "general", "kenobi"]);
  });
});

describe("sentences and stitching", () => {
  it("ends sentences on punctuation, long pauses and speaker changes", () => {
    const w = (text: string, start: number, speaker?: string) => ({ text, start, end: start + 0.3, ...(speaker ? { speaker } : {}) });
    const sentences = sentencesFromWords([w("Is", 0), w("it?", 0.4), w("Yes", 1), w("indeed", 1.4), w("then", 3.5), w("more", 4, "B")]);
    expect(sentences.map((s) => s.text)).toEqual(["Is it?", "Yes indeed", "then", "more"]);
  });

  it("keeps a word heard by two overlapping chunks once", () => {
    const words = stitchChunks([
      { start: 0, end: 30, words: [{ text: "alpha", start: 28.2, end: 28.7 }, { text: "beta", start: 29.1, end: 29.6 }, { text: "gam", start: 29.8, end: 30 }] },
      { start: 29, end: 59, words: [{ text: "Beta,", start: 29.12, end: 29.6 }, { text: "gamma", start: 29.8, end: 30.3 }, { text: "delta", start: 31, end: 31.4 }] },
    ]);
    expect(words.map((w) => w.text)).toEqual(["alpha", "beta", "gamma", "delta"]);
  });
});

describe("caption output escaping", () => {
  const transcript = buildTranscript("captions_url", null, [
    { text: "{\\pos(0,0)\\fs400}pwn", start: 0.5, end: 1 },
    { text: "a\\Nb\\hc\\n", start: 1, end: 1.5 },
    { text: "<b>&</b>", start: 1.5, end: 2 },
    { text: "-->", start: 2, end: 2.5 },
  ]);

  it("leaves no brace or backslash from the transcript in the ASS events", () => {
    expect(escapeAssText("{\\b1}x\\N")).toBe("(∖b1)x∖N");
    for (const style of ["bold", "clean", "boxed"] as const) {
      const metrics = captionMetrics(style, 720, 1280);
      const pages = layoutPages(clipWords(transcript.words, 0, 3, metrics.lineChars), metrics, 3);
      const ass = buildAss({ pages, metrics, style, position: "bottom", width: 720, height: 1280 });
      const events = ass.split("\n").filter((l) => l.startsWith("Dialogue:"));
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) {
        const text = event.split(",").slice(9).join(",");
        // Only the engine's own colour tags remain.
        const withoutOwnTags = text.replace(/\{\\c&H[0-9A-F]{6}&\}/g, "").replace(/\\N/g, "");
        expect(withoutOwnTags).not.toMatch(/[{}\\]/);
      }
    }
  });

  it("escapes WebVTT markup and SubRip tags in sidecars", () => {
    const metrics = captionMetrics("clean", 720, 1280);
    const pages = layoutPages(clipWords(transcript.words, 0, 3, metrics.lineChars), metrics, 3);
    const vtt = buildVtt(pages);
    const body = vtt.split("\n").filter((l) => !l.includes(" --> ") && l !== "WEBVTT");
    expect(body.join("\n")).not.toMatch(/[<>]/);
    expect(vtt).toContain("&lt;b&gt;&amp;&lt;/b&gt;");
    expect(parseCaptions(vtt).cues.length).toBe(pages.length);
    const srt = buildSrt(pages);
    expect(srt).not.toMatch(/[{}<]/);
  });

  it("escapes a file path for the filter graph: libass reads a file whose path is full of filter syntax", async () => {
    const hostileDir = path.join(await osTempDir("ass-path"), "a:b,c'd[e];f=g\\h");
    await mkdir(hostileDir, { recursive: true });
    const assPath = path.join(hostileDir, "x.ass");
    const metrics = captionMetrics("boxed", 320, 180);
    const words = [{ text: "WWWW", start: 0, end: 2 }];
    await writeFile(assPath, buildAss({ pages: layoutPages(words, metrics, 2), metrics, style: "boxed", position: "center", width: 320, height: 180 }));
    const mean = async (filter: string) => {
      const out = path.join(hostileDir, "frame.gray");
      const run = await runProcess({
        command: FFMPEG,
        args: ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=black:s=320x180:d=1", "-vf", filter, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", out],
        timeoutMs: 30_000,
      });
      expect(run.exitCode, run.stderrTail).toBe(0);
      const bytes = await readFile(out);
      return bytes.reduce((sum, b) => sum + b, 0) / bytes.length;
    };
    expect(await mean("null")).toBeLessThan(0.01);
    // White text on the box, drawn from the file at that path: the picture gets brighter.
    expect(await mean(`format=yuv420p,${assFilter(assPath)}`)).toBeGreaterThan(0.2);
  });
});

describe("caption layout", () => {
  it.each([
    [720, 1280],
    [1080, 1920],
    [720, 720],
    [720, 900],
    [1280, 720],
    [320, 180],
  ])("fits lines to a %ix%i picture and never covers more than a third of it", (width, height) => {
    for (const style of ["bold", "clean", "boxed"] as const) {
      const m = captionMetrics(style, width, height);
      // Widest case: every character as wide as a capital W in DejaVu Sans Bold (about 0.99 em) would not fit;
      // the layout's 0.62 em average holds for running text, checked by the OCR test on real renders.
      expect(m.lineChars * m.fontSize * 0.62).toBeLessThanOrEqual(width * 0.86 + 1e-6);
      expect(m.maxLines * m.fontSize * 1.3).toBeLessThanOrEqual(height / 3);
      const words = Array.from({ length: 40 }, (_, i) => ({ text: i % 7 === 0 ? "extraordinarily" : "word", start: i * 0.3, end: i * 0.3 + 0.25 }));
      for (const page of layoutPages(clipWords(words, 0, 12, m.lineChars), m, 12)) {
        expect(page.lines.length).toBeLessThanOrEqual(m.maxLines);
        for (const line of page.lines) expect(line.map((w) => w.text).join(" ").length).toBeLessThanOrEqual(m.lineChars);
        expect(page.end).toBeGreaterThan(page.start);
        expect(page.end).toBeLessThanOrEqual(12);
      }
    }
  });

  it("burns captions inside the clip's one filter graph, after scaling, and only when there is a file", () => {
    const source = { path: "/w/source.video", sizeBytes: 1, durationSeconds: 60, format: "mov,mp4", title: "t", width: 1920, height: 1080, fps: 30, hasAudio: true, startTime: 0 };
    const base = { source, candidate: { start: 5, end: 35, score: 1, reasons: ["x"] }, config: ClipConfig.parse({}), outPath: "/w/clip-0.mp4" };
    const graphOf = (args: string[]) => args[args.indexOf("-filter_complex") + 1]!;
    const plain = buildClipArgs({ ...base, captionsPath: null }).ffmpegArgs;
    const captioned = buildClipArgs({ ...base, captionsPath: "/w/clip-0.ass" }).ffmpegArgs;
    expect(graphOf(plain)).not.toContain("ass=");
    expect(graphOf(captioned)).toMatch(/scale=1080:1920[^;]*,format=yuv420p,ass=filename=\/w\/clip-0\.ass\[clip\]/);
    expect(captioned.filter((a) => a === "-filter_complex")).toHaveLength(1);
    expect(captioned.filter((a) => a !== graphOf(captioned))).toEqual(plain.filter((a) => a !== graphOf(plain)));
  });

  it("splits a word longer than a line", () => {
    const m = captionMetrics("bold", 320, 180);
    const words = clipWords([{ text: "x".repeat(m.lineChars * 2 + 3), start: 0, end: 3 }], 0, 5, m.lineChars);
    expect(words.map((w) => w.text.length)).toEqual([m.lineChars, m.lineChars, 3]);
  });
});

describe("hostile subtitle tracks in the source", () => {
  it("reduces an ASS track full of override tags, \\N and drawings to plain words", async () => {
    const work = await osTempDir("ass-track");
    const ass = [
      "[Script Info]", "ScriptType: v4.00+", "", "[V4+ Styles]",
      "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding",
      "Style: Default,Arial,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,1",
      "", "[Events]", "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text",
      "Dialogue: 0,0:00:00.50,0:00:01.50,Default,,0,0,0,,{\\pos(10,10)\\fs300\\c&H0000FF&}Hello\\Nworld{\\p1}m 0 0 l 100 100{\\p0}",
      "Dialogue: 0,0:00:01.00,0:00:01.80,Default,,0,0,0,,overlapping\\hline",
    ].join("\n");
    const assPath = path.join(work, "hostile.ass");
    await writeFile(assPath, ass);
    const video = path.join(work, "with-ass.mkv");
    const made = await runProcess({
      command: FFMPEG,
      args: ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=black:s=160x90:r=10:d=2", "-i", assPath, "-map", "0:v", "-map", "1:s", "-c:v", "libx264", "-preset", "ultrafast", "-c:s", "ass", video],
      timeoutMs: 30_000,
    });
    expect(made.exitCode, made.stderrTail).toBe(0);
    const runner = nativeRunner();
    const source = await probeSource({ runner, path: video, sizeBytes: 1, videoUrl: "https://x.test/v.mkv", platformTitle: null, maxSourceSeconds: 60, signal: new AbortController().signal });
    const { found } = await subtitleTrackCues(runner, source, path.join(work, "track.srt"), new AbortController().signal);
    const words = wordsFromCues(found!.cues, source.durationSeconds);
    expect(found!.cues.map((c) => c.text).join(" | ")).not.toMatch(/[{}\\]/);
    expect(words.map((w) => w.text)).toEqual(["Hello", "world", "overlapping", "line"]);
  });
});

describe("captions_url download", () => {
  let dir: string;
  let server: RecordingServer;
  let victim: RecordingServer;
  beforeAll(async () => {
    dir = await osTempDir("captions-url");
    victim = await startRecordingServer((_req, res) => res.end("secret"));
    server = await startRecordingServer((req, res) => {
      if (req.url === "/ok.srt") res.writeHead(200, { "content-type": "application/x-subrip" }).end(SRT);
      else if (req.url === "/private") res.writeHead(302, { location: `http://127.0.0.1:${victim.port}/meta` }).end();
      else if (req.url === "/metadata") res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
      else if (req.url === "/huge") {
        res.writeHead(200, { "content-type": "text/plain" });
        const chunk = Buffer.alloc(64 * 1024, "a");
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        pump();
      } else if (req.url === "/page") res.writeHead(200, { "content-type": "text/html" }).end("<html></html>");
      else if (req.url === "/garbage") res.writeHead(200, { "content-type": "text/plain" }).end("not subtitles at all");
      else res.writeHead(404).end();
    });
  });
  afterAll(async () => {
    await server.close();
    await victim.close();
    await removeTempDirs();
  });

  const onlyServer = (): AddressPolicy => (target) => (target.port === server.port ? null : publicOnlyPolicy(target));
  let n = 0;
  const fetchFrom = (route: string) =>
    fetchCaptionsUrl({
      url: server.url(route),
      destPath: path.join(dir, `c-${(n += 1)}`),
      timeoutMs: 10_000,
      stallTimeoutMs: 5_000,
      maxRedirects: 3,
      policy: onlyServer(),
      resolver: systemResolver,
      signal: new AbortController().signal,
    });

  it("fetches and parses a good file", async () => {
    const cues = await fetchFrom("/ok.srt");
    expect(cues.map((c) => c.text)).toEqual(["Hello there, world.", "How are you & yours?"]);
  });

  it.each([
    ["/private", /captions_url: The captions URL points to a private, loopback/],
    ["/metadata", /captions_url: The captions URL points to a private, loopback|link-local/],
    ["/huge", /larger than 5 MiB/],
    ["/page", /web page/],
    ["/garbage", /without a timing line/],
    ["/missing", /HTTP 404/],
  ])("fails %s with captions_invalid", async (route, message) => {
    const before = victim.connections;
    const failure = await failureOf(fetchFrom(route));
    expect(failure.code).toBe("captions_invalid");
    expect(failure.message).toMatch(message);
    expect(victim.connections).toBe(before);
  });

});
