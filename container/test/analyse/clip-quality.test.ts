/**
 * Clip quality on generated conversations: several espeak-ng
 * voices, people talking over each other, short replies, hesitations inside
 * sentences, laughter after emphatic exchanges, a music intro and outro, a
 * quiet music bed, a subtitle track whose cues the format itself cuts where
 * speakers overlap, and a 32-minute show made cheaply (test/media/conversation.ts).
 * Each case runs the analysis once per type and is judged as it comes out of
 * the analysis (no transcript) and, with a track, after the job's sentence
 * snapping: every edge outside every sentence of every speaker and every
 * laugh, every highlight inside a clip, no clip sharing more than half of
 * itself with another, the intro and outro inside no clip, pause_bounded
 * only where true. A source without speech clips on what can be seen and
 * heard for every type but podcast and lecture, which say they need speech.
 * Figures per case print at the end; `npm run bench:quality` runs a bigger
 * set (a 90-minute show, every type).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, type Transcript, type VideoType } from "#contract";
import { cachedConversation, type Conversation } from "../../../test/media/conversation.ts";
import { cachedSpeechSource } from "../../../test/media/speech.ts";
import { NoClipsFoundError } from "../../src/analyse/index.ts";
import type { SourceInfo } from "../../src/shared/types.ts";
import { analysedClips, figuresLine, judgeClips, NO_SPEECH_VLOG, probeFile, qualityCases, trackTranscript, withTranscript, type Judgement } from "../helpers/clip-quality.ts";
import { nativeRunner, removeTempDirs, tempDir } from "../helpers/media.ts";

const runner = nativeRunner();
const figures: Record<string, string | number>[] = [];

afterAll(async () => {
  console.log("clip quality per case (edges in speech: edges inside a sentence of any speaker or a laugh / all edges):");
  console.table(figures);
  await removeTempDirs();
});

function expectGood(j: Judgement, label: string): void {
  expect(j.clips, `${label}: clips`).toBeGreaterThanOrEqual(1);
  expect(j.edgesInSpeech, `${label}: edges inside speech`).toEqual([]);
  expect(j.highlightsCovered, `${label}: highlights inside a clip`).toBe(j.highlights);
  expect(j.worstOverlap, `${label}: worst overlap`).toBeLessThanOrEqual(0.5);
  expect(j.musicInside, `${label}: the intro or outro inside a clip`).toEqual([]);
  expect(j.falsePauseClaims, `${label}: pause_bounded claimed with an edge in speech`).toBe(0);
}

describe.each(qualityCases({ longMinutes: 32 }))("$name: $about", ({ name, spec, types, config }) => {
  const parsed = ClipConfig.parse(config);
  let conversation: Conversation;
  let source: SourceInfo;
  let transcript: Transcript | null = null;

  beforeAll(async () => {
    conversation = await cachedConversation(spec);
    source = await probeFile(runner, conversation.path);
    if (spec.subtitleTrack) transcript = await trackTranscript(runner, source, `${await tempDir("quality")}/${name}.srt`);
  }, 300_000);

  if (spec.subtitleTrack) {
    it("the track's cues end where the next speaker begins wherever people talk over each other", () => {
      expect(conversation.overlaps).toBeGreaterThan(0);
      // What the format did to the overlapping cues, read back as the job reads it: no gap at those seams.
      const seams = transcript!.sentences.filter((s, i) => i > 0 && s.start - transcript!.sentences[i - 1]!.end < 0.01);
      expect(seams.length).toBeGreaterThanOrEqual(conversation.overlaps);
    });
  }

  it.each(types)("%s: edges only where no one speaks, highlights kept, no music, little overlap", async (type: VideoType) => {
    const analysed = await analysedClips(runner, source, type, parsed);
    const raw = judgeClips(conversation, analysed.clips);
    figures.push(figuresLine(name, type, "none", raw));
    expectGood(raw, `${type} without a transcript`);
    if (type === "podcast") for (const clip of analysed.clips) expect(clip.reasons).toContain("pause_bounded");
    if (transcript) {
      const snapped = judgeClips(conversation, withTranscript(analysed, type, parsed, transcript, source.durationSeconds));
      figures.push(figuresLine(name, type, "track", snapped));
      expectGood(snapped, `${type} on the subtitle track`);
    }
  }, 300_000);
});

describe("a vlog without speech: scene changes, loud moments, a music-like bed", () => {
  let source: SourceInfo;
  const config = ClipConfig.parse({ min_clip_seconds: 10, max_clip_seconds: 30, max_clips: 3 });

  beforeAll(async () => {
    source = await probeFile(runner, (await cachedSpeechSource(NO_SPEECH_VLOG)).path);
  }, 120_000);

  it.each(["general", "vlog", "gaming", "sports"] as const)("%s clips on what can be seen and heard", async (type) => {
    const { clips } = await analysedClips(runner, source, type, config);
    figures.push({ case: "no speech", type, transcript: "none", clips: clips.length, reasons: [...new Set(clips.flatMap((c) => c.reasons))].join(" ") });
    expect(clips.length).toBeGreaterThanOrEqual(1);
    for (const clip of clips) {
      expect(clip.reasons).not.toContain("speech_density");
      expect(clip.reasons).not.toContain("vocal_emphasis");
    }
  });

  it.each(["podcast", "lecture"] as const)("%s fails with no_clips_found saying it needs speech", async (type) => {
    const failure = analysedClips(runner, source, type, config);
    await expect(failure).rejects.toBeInstanceOf(NoClipsFoundError);
    await expect(failure).rejects.toThrow(new RegExp(`No speech was found in the audio.*${type} clips are cut on speech`));
    figures.push({ case: "no speech", type, transcript: "none", clips: 0, reasons: "no_clips_found: needs speech" });
  });
});
