/** Shared by the speech suites: a transcript, clip captions, and jobs that carry them. */
import { type Transcript } from "#contract";
import { clipReport, expectAck, type EngineClient, type FakeEngine } from "./engine-stub.ts";
import type { TestAccount } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";

export const TRANSCRIPT: Transcript = {
  source: "subtitle_track",
  language: "en",
  words: [
    { text: "Why", start: 1, end: 1.3 },
    { text: "do", start: 1.3, end: 1.5 },
    { text: "clips", start: 1.5, end: 1.9 },
    { text: "matter?", start: 1.9, end: 2.4 },
    { text: "Because", start: 3, end: 3.5 },
    { text: "people", start: 3.5, end: 3.9 },
    { text: "<b>scroll</b>", start: 3.9, end: 4.4 },
  ],
  sentences: [
    { text: "Why do clips matter?", start: 1, end: 2.4 },
    { text: "Because people <b>scroll</b>", start: 3, end: 4.4 },
  ],
};

export const CLIP_VTT = "WEBVTT\n\n00:00:00.000 --> 00:00:01.400\nWhy do clips matter?\n";
export const CLIP_SRT = "1\n00:00:00,000 --> 00:00:01,400\nWhy do clips matter?\n";

export function put(client: EngineClient, suffix: string, body: BodyInit, contentType: string): Promise<Response> {
  return client.send(suffix, { method: "PUT", headers: { "Content-Type": contentType }, body });
}

export async function processingJob(engine: FakeEngine, account: TestAccount, body?: Record<string, unknown>): Promise<EngineClient> {
  const client = await startJob(account, engine, body);
  await client.probe({ duration_seconds: 60 });
  return client;
}

/** A job completed with a transcript, clip 0 with sidecars and burned captions, clip 1 without. */
export async function captionedJob(engine: FakeEngine, account: TestAccount): Promise<string> {
  const client = await processingJob(engine, account);
  await client.uploadClip(0, 512);
  await client.uploadClip(1, 512);
  await expectAck(await put(client, "transcript", JSON.stringify(TRANSCRIPT), "application/json"));
  await expectAck(await put(client, "clips/0/captions.vtt", CLIP_VTT, "text/vtt"));
  await expectAck(await put(client, "clips/0/captions.srt", CLIP_SRT, "application/x-subrip"));
  await expectAck(
    await client.complete({
      title: "Talk",
      source_duration_seconds: 60,
      clips: [
        clipReport(0, { text: "Why do clips matter? Because people scroll", title: "Why do clips matter?", captions_burned: true, sidecars: true }),
        clipReport(1),
      ],
      transcript: { source: "subtitle_track", language: "en", word_count: 7 },
      transcript_unavailable_reason: null,
    }),
  );
  return client.jobId;
}

