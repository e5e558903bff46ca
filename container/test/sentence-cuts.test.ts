import { describe, expect, it } from "vitest";
import type { TranscriptWord } from "#contract";
import { snapToSentences } from "../src/analyse/sentence-cuts.ts";
import { buildTranscript } from "../src/transcript/build.ts";
import { clipText, clipTitle } from "../src/transcript/title.ts";
import type { Candidate } from "../src/types.ts";

/** Sentences of ~`length` seconds, one word per 0.4 s, separated by 0.8 s pauses. */
function transcriptOf(sentences: string[], startAt = 1) {
  const words: TranscriptWord[] = [];
  let at = startAt;
  for (const sentence of sentences) {
    for (const text of sentence.split(" ")) {
      words.push({ text, start: at, end: at + 0.35 });
      at += 0.4;
    }
    at += 0.8;
  }
  return buildTranscript("subtitle_track", "en", words);
}

const candidate = (start: number, end: number, reasons = ["speech_density"]): Candidate => ({ start, end, score: 0.8, reasons });
const insideSentence = (t: number, spans: { start: number; end: number }[]) => spans.some((s) => t > s.start && t < s.end);

const TALK = [
  "This is the opening line of the talk today.",
  "We will look at three things in turn here.",
  "What is the best way to learn a language?",
  "Speak it every day with people who enjoy it.",
  "Reading helps too but speaking matters most of all.",
  "Another point is that mistakes are part of learning.",
  "Nobody speaks perfectly at first and that is fine.",
  "Finally practice a little every single day please.",
];

describe("clip edges on sentences", () => {
  const transcript = transcriptOf(TALK);
  const limits = { min: 5, max: 15, duration: 80 };

  it("moves edges out of sentences into the pauses, within the length limits", () => {
    const [clip] = snapToSentences([candidate(6.3, 16.1)], transcript, limits);
    expect(clip).toBeDefined();
    expect(insideSentence(clip!.start, transcript.sentences)).toBe(false);
    expect(insideSentence(clip!.end, transcript.sentences)).toBe(false);
    expect(insideSentence(clip!.start, transcript.words)).toBe(false);
    expect(clip!.end - clip!.start).toBeGreaterThanOrEqual(5);
    expect(clip!.end - clip!.start).toBeLessThanOrEqual(15);
    expect(clip!.reasons).toContain("complete_thought");
    expect(clip!.reasons).toContain("speech_density");
  });

  it("starts with the question when the clip would open on its answer", () => {
    const question = transcript.sentences[2]!;
    const answer = transcript.sentences[3]!;
    const [clip] = snapToSentences([candidate(answer.start - 0.1, answer.start + 12)], transcript, limits);
    expect(clip!.start).toBeLessThan(question.start);
    expect(clip!.start).toBeGreaterThan(transcript.sentences[1]!.end);
    expect(clip!.reasons[0]).toBe("question_answer");
  });

  it("never overlaps a better clip already placed, and keeps clips without words as they are", () => {
    const clips = snapToSentences([candidate(10, 20), candidate(14, 24), candidate(70, 78)], transcript, { ...limits, duration: 90 });
    for (let i = 0; i < clips.length; i++) {
      for (let j = i + 1; j < clips.length; j++) expect(clips[i]!.end <= clips[j]!.start || clips[j]!.end <= clips[i]!.start).toBe(true);
    }
    expect(clips.at(-1)).toEqual(candidate(70, 78));
  });

  it("falls back to word boundaries inside one long unpunctuated sentence", () => {
    const ramble = transcriptOf([Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ")]);
    const [clip] = snapToSentences([candidate(3.13, 12.17)], ramble, { min: 5, max: 15, duration: 40 });
    expect(insideSentence(clip!.start, ramble.words)).toBe(false);
    expect(insideSentence(clip!.end, ramble.words)).toBe(false);
    expect(clip!.reasons).not.toContain("complete_thought");
  });
});

describe("clip text and title", () => {
  const transcript = transcriptOf(["So um, well, this part is only filler here.", "Why do cats sleep all day long?", "They save energy for the hunt."]);

  it("takes the clip's own words and a question as the title, without fillers", () => {
    expect(clipText(transcript.words, 0, 100)).toBe(transcript.words.map((w) => w.text).join(" "));
    expect(clipTitle(transcript.sentences, transcript.words, 0, 100)).toBe("Why do cats sleep all day long?");
    const opening = transcript.sentences[0]!;
    expect(clipTitle([opening], transcript.words, opening.start, opening.end + 0.1)).toBe("This part is only filler here");
  });

  it("cuts a long title at a word and stays within 120 characters", () => {
    const long = transcriptOf([`${Array.from({ length: 40 }, () => "incredibly").join(" ")}.`]);
    const title = clipTitle(long.sentences, long.words, 0, 100)!;
    expect(title.length).toBeLessThanOrEqual(120);
    expect(title.endsWith("…")).toBe(true);
    expect(title.replace("…", "").split(" ").every((w) => w === "incredibly" || w === "Incredibly")).toBe(true);
  });

  it("has no text or title without words", () => {
    expect(clipText(transcript.words, 200, 210)).toBeNull();
    expect(clipTitle(transcript.sentences, transcript.words, 200, 210)).toBeNull();
  });
});
