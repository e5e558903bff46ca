/**
 * OpenTimelineIO JSON: a Timeline.1 with one video Track.1 in its Stack.1,
 * one Clip.2 per kept span of each clip, end to end, each referring to the
 * source by an ExternalReference.1 (its URL, or for an upload its file name),
 * times as RationalTime.1 at the source's rate. OTIO's core schema has no
 * crop: the window and its keys travel in each clip's metadata under
 * `clipjobs`, with the clip's URL and caption sidecars; the timeline's
 * metadata names the job and its transcript. JSON.stringify escapes the text.
 */
import { fps, type ExportClip, type ExportSpan, type ExportTimeline } from "./timeline.ts";

function rationalTime(frames: number, rate: number) {
  return { OTIO_SCHEMA: "RationalTime.1", rate, value: frames };
}

function timeRange(start: number, duration: number, rate: number) {
  return { OTIO_SCHEMA: "TimeRange.1", start_time: rationalTime(start, rate), duration: rationalTime(duration, rate) };
}

function otioClip(timeline: ExportTimeline, clip: ExportClip, span: ExportSpan, part: number) {
  const rate = fps(timeline.rate);
  const target = timeline.source.url ?? timeline.source.fileName;
  return {
    OTIO_SCHEMA: "Clip.2",
    name: clip.spans.length > 1 ? `${clip.name} (part ${part + 1} of ${clip.spans.length})` : clip.name,
    metadata: {
      clipjobs: {
        clip_index: clip.index,
        clip_url: clip.url,
        captions: clip.captions,
        output: clip.output,
        // The crop window in source pixels; keys: its top-left corner, frames from the span's start.
        crop: { width: clip.window.width, height: clip.window.height, keys: span.crop },
        split_views_not_carried: clip.split,
      },
    },
    source_range: timeRange(span.sourceIn, span.sourceOut - span.sourceIn, rate),
    effects: [],
    markers: [],
    enabled: true,
    media_references: {
      DEFAULT_MEDIA: {
        OTIO_SCHEMA: "ExternalReference.1",
        name: timeline.source.fileName,
        metadata: {},
        available_range: timeline.source.durationFrames === null ? null : timeRange(0, timeline.source.durationFrames, rate),
        available_image_bounds: null,
        target_url: target,
      },
    },
    active_media_reference_key: "DEFAULT_MEDIA",
  };
}

export function writeOtio(timeline: ExportTimeline): string {
  const clips = timeline.clips.flatMap((clip) => clip.spans.map((span, part) => otioClip(timeline, clip, span, part)));
  const document = {
    OTIO_SCHEMA: "Timeline.1",
    name: timeline.title,
    metadata: { clipjobs: { job_id: timeline.jobId, transcript_url: timeline.transcriptUrl, source: { width: timeline.source.width, height: timeline.source.height } } },
    global_start_time: null,
    tracks: {
      OTIO_SCHEMA: "Stack.1",
      name: "tracks",
      metadata: {},
      source_range: null,
      effects: [],
      markers: [],
      enabled: true,
      children: [
        {
          OTIO_SCHEMA: "Track.1",
          name: "V1",
          metadata: {},
          source_range: null,
          effects: [],
          markers: [],
          enabled: true,
          children: clips,
          kind: "Video",
        },
      ],
    },
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
