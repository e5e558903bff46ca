/**
 * The export writers on a job whose title and source file name hold XML
 * metacharacters, quotes, a newline, an emoji and a control character: every
 * format still parses (FCPXML and MLT with a strict XML parser, the EDL with
 * the strict CMX 3600 parser below, the OTIO against the fields of its
 * schema), carries one event or clip per kept span, and names the source and
 * the caption sidecars. Plus the model's crop keys for still, panning and
 * cutting cameras.
 */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import type { ClipFraming } from "#contract";
import { writeEdl } from "../../src/jobs/export/edl.ts";
import { sourceFileName } from "../../src/jobs/export/from-job.ts";
import { writeFcpxml } from "../../src/jobs/export/fcpxml.ts";
import { writeMlt } from "../../src/jobs/export/mlt.ts";
import { writeOtio } from "../../src/jobs/export/otio.ts";
import { cropKeys, frameRate, keptSpans, toFrames, type ExportClip, type ExportTimeline } from "../../src/jobs/export/timeline.ts";
import { xmlClean } from "../../src/jobs/export/xml.ts";
import { findAll, parseXml } from "./xml-tree.ts";

const NASTY = `Tom & "Jerry" <b>it's</b> ]]> --\nsecond line 🎬 \u0001end`;
const NASTY_FILE = `a&b <"c">\n'🎥'.mp4`;

const FRAMING: ClipFraming = {
  source_width: 1920,
  source_height: 1080,
  source_fps: 30000 / 1001,
  crop_width: 606,
  crop_height: 1080,
  path: [
    { from_seconds: 0, to_seconds: 4, x0: 0.3, x1: 0.6, y0: 0.5, y1: 0.5 },
    { from_seconds: 4, to_seconds: 10, x0: 0.8, x1: 0.8, y0: 0.5, y1: 0.5 },
  ],
  split: false,
};

function clip(index: number, start: number, end: number, removed: { start_seconds: number; end_seconds: number }[], moving: boolean): ExportClip {
  const rate = frameRate(FRAMING.source_fps);
  const framing: ClipFraming = moving ? FRAMING : { ...FRAMING, path: [{ from_seconds: 0, to_seconds: end - start, x0: 0.5, x1: 0.5, y0: 0.5, y1: 0.5 }] };
  return {
    index,
    name: index === 0 ? NASTY : `Clip ${index + 1}`,
    url: `https://cdn.example/clips/job_x/${index}.mp4`,
    window: { width: 606, height: 1080 },
    output: { width: 1080, height: 1920 },
    spans: keptSpans(start, end, removed).map((span) => ({ sourceIn: toFrames(span.start, rate), sourceOut: toFrames(span.end, rate), crop: cropKeys(framing, start, span, rate) })),
    captions: { vtt: `https://cdn.example/clips/job_x/${index}.vtt`, srt: `https://cdn.example/clips/job_x/${index}.srt` },
    split: false,
  };
}

function timeline(clips: ExportClip[]): ExportTimeline {
  return {
    jobId: "job_x",
    title: NASTY,
    source: { url: null, fileName: NASTY_FILE, width: 1920, height: 1080, durationFrames: toFrames(120, frameRate(FRAMING.source_fps)) },
    rate: frameRate(FRAMING.source_fps),
    clips,
    transcriptUrl: "https://api.example/api/v1/jobs/job_x/transcript",
  };
}

const ONE_SPAN_EACH = timeline([clip(0, 10, 20, [], true), clip(1, 40, 52.5, [], false), clip(2, 70, 75, [], false)]);
const WITH_REMOVALS = timeline([clip(0, 10, 20, [{ start_seconds: 12, end_seconds: 13.5 }], true)]);
/** What survives XML: the text less the one character XML 1.0 cannot carry. */
const NASTY_IN_XML = xmlClean(NASTY);

// ---- CMX 3600, strictly: a title, the frame-code mode, then events with their comment lines.
const TC = String.raw`(\d{2}):(\d{2}):(\d{2}):(\d{2})`;
const EVENT = new RegExp(String.raw`^(\d{3})  ([A-Z0-9_]{1,32}) +(V|A|AA|B|AA/V|A2) +(C) +${TC} ${TC} ${TC} ${TC}$`);

interface EdlEvent {
  number: number;
  reel: string;
  srcIn: number;
  srcOut: number;
  recIn: number;
  recOut: number;
  comments: string[];
}

function parseCmx3600(text: string, base: number): { title: string; events: EdlEvent[] } {
  expect(text).toMatch(/^[\x20-\x7E\r\n]*$/);
  const lines = text.split("\r\n");
  expect(lines.at(-1)).toBe("");
  lines.pop();
  const title = /^TITLE: (.{1,70})$/.exec(lines.shift() ?? "")?.[1];
  expect(title).toBeDefined();
  expect(lines.shift()).toMatch(/^FCM: (NON-DROP FRAME|DROP FRAME)$/);
  const frames = (m: RegExpExecArray, at: number) => ((Number(m[at]) * 60 + Number(m[at + 1])) * 60 + Number(m[at + 2])) * base + Number(m[at + 3]);
  const events: EdlEvent[] = [];
  for (const line of lines) {
    if (line === "") continue;
    const event = EVENT.exec(line);
    if (event) {
      for (const at of [5, 9, 13, 17]) expect(Number(event[at + 3])).toBeLessThan(base);
      events.push({ number: Number(event[1]), reel: event[2]!, srcIn: frames(event, 5), srcOut: frames(event, 9), recIn: frames(event, 13), recOut: frames(event, 17), comments: [] });
      continue;
    }
    const comment = /^\* (.*)$/.exec(line);
    if (!comment || events.length === 0) throw new Error(`not a CMX 3600 line: ${JSON.stringify(line)}`);
    events.at(-1)!.comments.push(comment[1]!);
  }
  events.forEach((event, i) => {
    expect(event.number).toBe(i + 1);
    expect(event.srcOut - event.srcIn).toBe(event.recOut - event.recIn);
    expect(event.srcOut).toBeGreaterThan(event.srcIn);
    if (i > 0) expect(event.recIn).toBe(events[i - 1]!.recOut);
  });
  return { title: title!, events };
}

// ---- OTIO: the serialized fields of each schema (OpenTimelineIO's classes), strictly: a missing or unknown field fails.
const RationalTime = z.strictObject({ OTIO_SCHEMA: z.literal("RationalTime.1"), rate: z.number().positive(), value: z.number() });
const TimeRange = z.strictObject({ OTIO_SCHEMA: z.literal("TimeRange.1"), start_time: RationalTime, duration: RationalTime });
const Metadata = z.record(z.string(), z.unknown());
const ExternalReference = z.strictObject({
  OTIO_SCHEMA: z.literal("ExternalReference.1"),
  name: z.string(),
  metadata: Metadata,
  available_range: TimeRange.nullable(),
  available_image_bounds: z.null(),
  target_url: z.string().min(1),
});
const Item = {
  name: z.string(),
  metadata: Metadata,
  source_range: TimeRange.nullable(),
  effects: z.array(z.unknown()),
  markers: z.array(z.unknown()),
  enabled: z.boolean(),
};
const Clip = z.strictObject({
  OTIO_SCHEMA: z.literal("Clip.2"),
  ...Item,
  source_range: TimeRange,
  media_references: z.record(z.string(), ExternalReference),
  active_media_reference_key: z.string(),
});
const Track = z.strictObject({ OTIO_SCHEMA: z.literal("Track.1"), ...Item, children: z.array(Clip), kind: z.enum(["Video", "Audio"]) });
const Stack = z.strictObject({ OTIO_SCHEMA: z.literal("Stack.1"), ...Item, children: z.array(Track) });
const Timeline = z.strictObject({ OTIO_SCHEMA: z.literal("Timeline.1"), name: z.string(), metadata: Metadata, global_start_time: RationalTime.nullable(), tracks: Stack });

describe("crop keys", () => {
  const rate = frameRate(30);
  const still: ClipFraming = { ...FRAMING, source_fps: 30, path: [{ from_seconds: 0, to_seconds: 10, x0: 0.5, x1: 0.5, y0: 0.5, y1: 0.5 }] };

  test("a still camera is one key, the window centred and even", () => {
    expect(cropKeys(still, 10, { start: 10, end: 20 }, rate)).toEqual([{ frame: 0, left: 656, top: 0 }]);
  });

  test("a window at the frame's edge stays inside it", () => {
    const edge: ClipFraming = { ...still, path: [{ from_seconds: 0, to_seconds: 10, x0: 1, x1: 1, y0: 0, y1: 0 }] };
    expect(cropKeys(edge, 10, { start: 10, end: 20 }, rate)).toEqual([{ frame: 0, left: 1920 - 606, top: 0 }]);
  });

  test("a pan is keyed at its ends, a cut by two keys a frame apart", () => {
    const keys = cropKeys({ ...FRAMING, source_fps: 30 }, 10, { start: 10, end: 20 }, rate);
    expect(keys.map((k) => k.frame)).toEqual([0, 119, 120, 299]);
    expect(keys[0]!.left).toBe(2 * Math.trunc((0.3 * 1920 - 303) / 2));
    expect(keys[2]!.left).toBe(2 * Math.trunc((0.8 * 1920 - 303) / 2));
    expect(keys[3]!.left).toBe(keys[2]!.left);
  });

  test("a span after a removal is keyed from its own first frame", () => {
    const keys = cropKeys({ ...FRAMING, source_fps: 30 }, 10, { start: 12, end: 20 }, rate);
    expect(keys[0]!.frame).toBe(0);
    expect(keys[0]!.left).toBe(2 * Math.trunc(((0.3 + 0.3 * (2 / 4)) * 1920 - 303) / 2));
  });

  test("kept spans leave out the removed ones", () => {
    expect(keptSpans(10, 20, [{ start_seconds: 15, end_seconds: 16 }, { start_seconds: 12, end_seconds: 13 }])).toEqual([
      { start: 10, end: 12 },
      { start: 13, end: 15 },
      { start: 16, end: 20 },
    ]);
  });

  test("the source's file name: an upload's own, a file URL's, else the video's title", () => {
    expect(sourceFileName("upload://upl_abc/My%20Talk%20%F0%9F%8E%AC.mp4", "My Talk 🎬.mp4")).toBe("My Talk 🎬.mp4");
    expect(sourceFileName("https://videos.example.com/a/b/keynote.mp4?sig=1", "Keynote")).toBe("keynote.mp4");
    expect(sourceFileName("https://www.youtube.com/watch?v=abc", "A talk")).toBe("A talk");
    expect(sourceFileName("https://videos.example.com/", null)).toBe("videos.example.com");
  });

  test("NTSC rates are exact ratios", () => {
    expect(frameRate(29.97)).toEqual({ num: 30000, den: 1001 });
    expect(frameRate(25)).toEqual({ num: 25, den: 1 });
    expect(frameRate(12.5)).toEqual({ num: 12500, den: 1000 });
  });
});

describe("EDL (CMX 3600)", () => {
  test("parses strictly with one event per clip, on the source's frames", () => {
    const { title, events } = parseCmx3600(writeEdl(ONE_SPAN_EACH), 30);
    expect(title).toBe(`Tom & "Jerry" <b>it's</b> ]]> -- second line ? end`.slice(0, 70));
    expect(events).toHaveLength(3);
    expect(events.map((e) => e.srcIn)).toEqual(ONE_SPAN_EACH.clips.map((c) => c.spans[0]!.sourceIn));
    expect(events[0]!.recIn).toBe(3600 * 30);
    expect(events[0]!.reel).toBe("A_B_C");
    expect(events[0]!.comments).toEqual([
      `FROM CLIP NAME: Tom & "Jerry" <b>it's</b> ]]> -- second line ? end`,
      `SOURCE FILE: a&b <"c"> '?'.mp4`,
      "CAPTIONS VTT: https://cdn.example/clips/job_x/0.vtt",
      "CAPTIONS SRT: https://cdn.example/clips/job_x/0.srt",
    ]);
  });

  test("a clip with a removed pause is one event per kept span", () => {
    const { events } = parseCmx3600(writeEdl(WITH_REMOVALS), 30);
    expect(events).toHaveLength(2);
    expect(events[0]!.comments[0]).toMatch(/\(part 1 of 2\)$/);
  });

  test("the reel keeps to 32 characters", () => {
    const long = { ...ONE_SPAN_EACH, source: { ...ONE_SPAN_EACH.source, fileName: `${"x".repeat(50)}.mov` } };
    expect(parseCmx3600(writeEdl(long), 30).events[0]!.reel).toBe("X".repeat(32));
  });
});

describe("FCPXML", () => {
  test("is well-formed, with an asset-clip per clip and the title intact", () => {
    const { root, doctype } = parseXml(writeFcpxml(ONE_SPAN_EACH));
    expect(doctype?.trim()).toBe("fcpxml");
    expect(root.name).toBe("fcpxml");
    expect(root.attributes.version).toBe("1.10");
    const clips = findAll(root, "asset-clip");
    expect(clips.map((c) => c.attributes.name)).toEqual([NASTY_IN_XML, "Clip 2", "Clip 3"]);
    expect(findAll(root, "project")[0]!.attributes.name).toBe(NASTY_IN_XML);
    expect(findAll(root, "asset")[0]!.attributes.name).toBe(NASTY_FILE);
    expect(findAll(root, "media-rep")[0]!.attributes.src).toBe(`file:./${encodeURIComponent(NASTY_FILE)}`);
    // 10 s to 20 s at 29.97: frames 300 to 599 (599.4 rounded), as rational times in whole frames.
    expect(clips[0]!.attributes.start).toBe(`${300 * 1001}/30000s`);
    expect(clips[0]!.attributes.duration).toBe(`${299 * 1001}/30000s`);
    expect(clips[1]!.attributes.offset).toBe(clips[0]!.attributes.duration);
    expect(findAll(clips[0]!, "note")[0]!.text).toContain("https://cdn.example/clips/job_x/0.vtt");
  });

  test("a moving crop is keyframed position, a still one a fixed position", () => {
    const { root } = parseXml(writeFcpxml(ONE_SPAN_EACH));
    const [moving, still] = findAll(root, "asset-clip");
    expect(findAll(moving!, "adjust-conform")[0]!.attributes.type).toBe("fill");
    const keys = findAll(moving!, "keyframe");
    expect(keys.length).toBe(4);
    const xs = keys.map((k) => Number(k.attributes.value!.split(" ")[0]));
    // The window moves right over the source, so the source moves left: x falls, then jumps further left on the cut.
    expect(xs[1]).toBeLessThan(xs[0]!);
    expect(xs[2]).toBeLessThan(xs[1]!);
    expect(findAll(still!, "keyframe")).toHaveLength(0);
    // Centred, less the render's even rounding of the window's corner (one source pixel, 0.09% of the height).
    const [x, y] = findAll(still!, "adjust-transform")[0]!.attributes.position!.split(" ").map(Number);
    expect(Math.abs(x!)).toBeLessThan(0.1);
    expect(y).toBe(0);
  });
});

describe("MLT", () => {
  test("is well-formed, with an entry per clip and the names intact", () => {
    const { root } = parseXml(writeMlt(ONE_SPAN_EACH));
    expect(root.name).toBe("mlt");
    expect(root.attributes.title).toBe(NASTY_IN_XML);
    const profile = findAll(root, "profile")[0]!;
    expect([profile.attributes.width, profile.attributes.height, profile.attributes.frame_rate_num, profile.attributes.frame_rate_den]).toEqual(["1080", "1920", "30000", "1001"]);
    const entries = findAll(root, "entry");
    expect(entries).toHaveLength(3);
    const captionOf = (e: (typeof entries)[number]) => findAll(e, "property").find((p) => p.attributes.name === "shotcut:caption")?.text;
    expect(captionOf(entries[0]!)).toBe(NASTY_IN_XML);
    expect(findAll(root, "producer")[0]!.children.find((p) => p.attributes.name === "resource")?.text).toBe(NASTY_FILE);
    expect(entries[0]!.attributes.in).toBe("300");
    expect(entries[0]!.attributes.out).toBe("598");
  });
});

describe("OTIO", () => {
  test("validates against the schema's fields, with a clip per kept span", () => {
    const parsed = Timeline.parse(JSON.parse(writeOtio(WITH_REMOVALS)));
    expect(parsed.name).toBe(NASTY);
    const clips = parsed.tracks.children[0]!.children;
    expect(clips).toHaveLength(2);
    expect(clips[0]!.media_references[clips[0]!.active_media_reference_key]!.target_url).toBe(NASTY_FILE);
    expect(clips[0]!.source_range.start_time).toEqual({ OTIO_SCHEMA: "RationalTime.1", rate: 30000 / 1001, value: 300 });
    expect(clips[0]!.name).toBe(`${NASTY} (part 1 of 2)`);
  });

  test("carries the crop and the sidecars in the clip's metadata", () => {
    const parsed = Timeline.parse(JSON.parse(writeOtio(ONE_SPAN_EACH)));
    const meta = parsed.tracks.children[0]!.children[0]!.metadata.clipjobs as { crop: { keys: unknown[] }; captions: { vtt: string } };
    expect(meta.crop.keys).toHaveLength(4);
    expect(meta.captions.vtt).toBe("https://cdn.example/clips/job_x/0.vtt");
  });
});
