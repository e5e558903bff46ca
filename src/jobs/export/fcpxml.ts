/**
 * FCPXML 1.10 (Final Cut Pro; DaVinci Resolve imports it too): one project
 * whose sequence has the clips' picture size and the source's rate, with an
 * asset-clip per kept span of each clip, end to end on the spine.
 *
 * The crop: the sequence has the clip's shape and the source is conformed to
 * fill it (adjust-conform type="fill"), which scales it exactly as the clip's
 * crop window was scaled; adjust-transform's position then moves the source
 * so the window's centre is in the frame's centre. FCPXML positions are in
 * percent of the frame's height from its centre, y up. A moving window is a
 * keyframed position (keyframe times in the clip's source time); a cut of
 * the camera is two keys one frame apart.
 *
 * Times are rational seconds in whole frames of the source's rate. Text goes
 * through xml.ts. The clip's caption sidecars and the job's transcript are named in its note.
 */
import type { CropKey, ExportClip, ExportTimeline, FrameRate } from "./timeline.ts";
import { xmlAttr, xmlText } from "./xml.ts";

/** `frames` frames as FCPXML's rational seconds. */
export function fcpTime(frames: number, rate: FrameRate): string {
  if (frames === 0) return "0s";
  return `${frames * rate.den}/${rate.num}s`;
}

function round(value: number): string {
  return String(Math.round(value * 10000) / 10000);
}

/** Where the source sits for one crop key, in FCPXML's position units. */
export function positionFor(key: CropKey, clip: Pick<ExportClip, "window" | "output">, source: { width: number; height: number }): { x: number; y: number } {
  const scale = clip.output.height / clip.window.height;
  const offsetX = (source.width / 2 - (key.left + clip.window.width / 2)) * scale;
  const offsetY = (key.top + clip.window.height / 2 - source.height / 2) * scale;
  return { x: (offsetX / clip.output.height) * 100, y: (offsetY / clip.output.height) * 100 };
}

function transform(clip: ExportClip, keys: CropKey[], sourceIn: number, timeline: ExportTimeline, indent: string): string {
  const at = (key: CropKey) => {
    const p = positionFor(key, clip, timeline.source);
    return `${round(p.x)} ${round(p.y)}`;
  };
  if (keys.length === 1) return `${indent}<adjust-transform position="${at(keys[0]!)}"/>`;
  const frames = keys.map((key) => `${indent}      <keyframe time="${fcpTime(sourceIn + key.frame, timeline.rate)}" value="${at(key)}" interp="linear"/>`);
  return [
    `${indent}<adjust-transform position="${at(keys[0]!)}">`,
    `${indent}  <param name="position">`,
    `${indent}    <keyframeAnimation>`,
    ...frames,
    `${indent}    </keyframeAnimation>`,
    `${indent}  </param>`,
    `${indent}</adjust-transform>`,
  ].join("\n");
}

function note(clip: ExportClip, transcriptUrl: string | null): string {
  const lines = [`clipjobs clip ${clip.index + 1}: ${clip.url}`];
  if (clip.captions) lines.push(`Captions: ${clip.captions.vtt} ${clip.captions.srt}`);
  if (transcriptUrl) lines.push(`Transcript: ${transcriptUrl}`);
  if (clip.split) lines.push("Split-screen stretches of the rendered clip are not carried: this is its single view's crop.");
  return lines.join("\n");
}

export function writeFcpxml(timeline: ExportTimeline): string {
  const { rate, source } = timeline;
  const frameDuration = fcpTime(1, rate);
  const output = timeline.clips[0]?.output ?? { width: source.width, height: source.height };
  const mediaSrc = timeline.source.url ?? `file:./${encodeURIComponent(source.fileName)}`;
  const lastFrame = Math.max(0, ...timeline.clips.flatMap((clip) => clip.spans.map((span) => span.sourceOut)));
  const assetFrames = Math.max(source.durationFrames ?? 0, lastFrame);
  const items: string[] = [];
  let offset = 0;
  for (const clip of timeline.clips) {
    clip.spans.forEach((span, part) => {
      const length = span.sourceOut - span.sourceIn;
      const name = clip.spans.length > 1 ? `${clip.name} (part ${part + 1} of ${clip.spans.length})` : clip.name;
      items.push(
        [
          `          <asset-clip ref="r3" name="${xmlAttr(name)}" offset="${fcpTime(offset, rate)}" start="${fcpTime(span.sourceIn, rate)}" duration="${fcpTime(length, rate)}" format="r2" tcFormat="NDF">`,
          `            <note>${xmlText(note(clip, timeline.transcriptUrl))}</note>`,
          `            <adjust-conform type="fill"/>`,
          transform(clip, span.crop, span.sourceIn, timeline, "            "),
          `          </asset-clip>`,
        ].join("\n"),
      );
      offset += length;
    });
  }
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE fcpxml>
<fcpxml version="1.10">
  <resources>
    <format id="r1" name="FFVideoFormatRateUndefined" frameDuration="${frameDuration}" width="${output.width}" height="${output.height}"/>
    <format id="r2" name="FFVideoFormatRateUndefined" frameDuration="${frameDuration}" width="${source.width}" height="${source.height}"/>
    <asset id="r3" name="${xmlAttr(source.fileName)}" start="0s" duration="${fcpTime(assetFrames, rate)}" hasVideo="1" hasAudio="1" format="r2" audioSources="1" audioChannels="2">
      <media-rep kind="original-media" src="${xmlAttr(mediaSrc)}"/>
    </asset>
  </resources>
  <library>
    <event name="${xmlAttr(timeline.title)}">
      <project name="${xmlAttr(timeline.title)}">
        <sequence format="r1" duration="${fcpTime(offset, rate)}" tcStart="0s" tcFormat="NDF">
          <spine>
${items.join("\n")}
          </spine>
        </sequence>
      </project>
    </event>
  </library>
</fcpxml>
`;
}
