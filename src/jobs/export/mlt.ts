/**
 * MLT XML (Shotcut, Kdenlive; Debian's `melt` renders it headless): a
 * profile of the clips' picture size at the source's rate, the source as one
 * avformat producer, and a playlist with an entry per kept span of each clip,
 * end to end.
 *
 * The crop: each entry carries an `affine` filter whose rectangle places the
 * whole source frame, scaled as the clip's crop window was scaled to the
 * picture, so that the window fills the profile. A moving window is a
 * keyframed rectangle (frames counted from the entry's first frame, linear
 * between keys); a cut of the camera is two keys one frame apart.
 *
 * Names and sidecars: the producer carries the source's name and the entry's
 * filter its clip's name (Shotcut's `shotcut:caption`), the clip's URL and
 * its caption sidecars as `clipjobs:*` properties, which editors keep and
 * ignore. Text goes through xml.ts.
 */
import { fps, type CropKey, type ExportClip, type ExportTimeline } from "./timeline.ts";
import { xmlAttr, xmlText } from "./xml.ts";

function num(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

/** The source frame's rectangle in the profile for one crop key: "x y w h opacity". */
export function rectFor(key: CropKey, clip: Pick<ExportClip, "window" | "output">, source: { width: number; height: number }): string {
  const scale = clip.output.width / clip.window.width;
  return `${num(-key.left * scale)} ${num(-key.top * scale)} ${num(source.width * scale)} ${num(source.height * scale)} 1`;
}

function property(name: string, value: string, indent: string): string {
  return `${indent}<property name="${xmlAttr(name)}">${xmlText(value)}</property>`;
}

export function writeMlt(timeline: ExportTimeline): string {
  const { rate, source } = timeline;
  const output = timeline.clips[0]?.output ?? { width: source.width, height: source.height };
  const resource = source.url ?? source.fileName;
  const lastFrame = Math.max(0, ...timeline.clips.flatMap((clip) => clip.spans.map((span) => span.sourceOut)));
  const length = Math.max(source.durationFrames ?? 0, lastFrame);
  const entries: string[] = [];
  for (const clip of timeline.clips) {
    clip.spans.forEach((span, part) => {
      const name = clip.spans.length > 1 ? `${clip.name} (part ${part + 1} of ${clip.spans.length})` : clip.name;
      const rect = span.crop.map((key) => `${key.frame}=${rectFor(key, clip, source)}`).join(";");
      const lines = [
        `    <entry producer="source" in="${span.sourceIn}" out="${span.sourceOut - 1}">`,
        // The filter's in/out are the entry's: its keys count from the entry's first frame.
        `      <filter in="${span.sourceIn}" out="${span.sourceOut - 1}">`,
        property("mlt_service", "affine", "        "),
        property("transition.fill", "1", "        "),
        property("transition.distort", "0", "        "),
        property("transition.rect", rect, "        "),
        property("shotcut:caption", name, "        "),
        property("clipjobs:clip_url", clip.url, "        "),
        ...(clip.captions ? [property("clipjobs:captions_vtt", clip.captions.vtt, "        "), property("clipjobs:captions_srt", clip.captions.srt, "        ")] : []),
        `      </filter>`,
        `    </entry>`,
      ];
      entries.push(lines.join("\n"));
    });
  }
  return `<?xml version="1.0" encoding="utf-8"?>
<mlt LC_NUMERIC="C" version="7.12.0" title="${xmlAttr(timeline.title)}" producer="main">
  <profile description="${output.width}x${output.height} ${num(fps(rate))} fps" width="${output.width}" height="${output.height}" progressive="1" sample_aspect_num="1" sample_aspect_den="1" display_aspect_num="${output.width}" display_aspect_den="${output.height}" frame_rate_num="${rate.num}" frame_rate_den="${rate.den}" colorspace="709"/>
  <producer id="source" in="0" out="${Math.max(0, length - 1)}">
${property("resource", resource, "    ")}
${property("mlt_service", "avformat", "    ")}
${property("shotcut:caption", source.fileName, "    ")}
${timeline.transcriptUrl ? `${property("clipjobs:transcript", timeline.transcriptUrl, "    ")}\n` : ""}  </producer>
  <playlist id="main">
${property("title", timeline.title, "    ")}
${entries.join("\n")}
  </playlist>
  <tractor id="tractor">
    <track producer="main"/>
  </tractor>
</mlt>
`;
}
