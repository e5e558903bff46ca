import { describe, expect, it } from "vitest";
import type { TranscriptWord } from "#contract";
import { snapToSentences } from "../../src/analyse/sentence-cuts.ts";
import { buildTranscript, wordsFromCues } from "../../src/transcript/build.ts";
import type { Cue } from "../../src/transcript/cues.ts";
import { clipText, clipTitle } from "../../src/transcript/title.ts";
import type { Candidate } from "../../src/shared/types.ts";

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
    const [clip] = snapToSentences([candidate(6.3, 16.1)], transcript, limits, null);
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
    const [clip] = snapToSentences([candidate(answer.start - 0.1, answer.start + 12)], transcript, limits, null);
    expect(clip!.start).toBeLessThan(question.start);
    expect(clip!.start).toBeGreaterThan(transcript.sentences[1]!.end);
    expect(clip!.reasons[0]).toBe("question_answer");
  });

  it("never overlaps a better clip already placed, and keeps clips without words as they are", () => {
    const clips = snapToSentences([candidate(10, 20), candidate(14, 24), candidate(70, 78)], transcript, { ...limits, duration: 90 }, null);
    for (let i = 0; i < clips.length; i++) {
      for (let j = i + 1; j < clips.length; j++) expect(clips[i]!.end <= clips[j]!.start || clips[j]!.end <= clips[i]!.start).toBe(true);
    }
    expect(clips.at(-1)).toEqual(candidate(70, 78));
  });

  it("falls back to word boundaries inside one long unpunctuated sentence, where the speaker pauses", () => {
    // 40 words without punctuation; after every sixth a breath of 0.5 s (a real pause), otherwise 0.05 s between words.
    const words: TranscriptWord[] = [];
    let at = 1;
    for (let i = 0; i < 40; i++) {
      words.push({ text: `word${i}`, start: at, end: at + 0.35 });
      at += 0.4 + (i % 6 === 5 ? 0.45 : 0);
    }
    const ramble = buildTranscript("subtitle_track", "en", words);
    expect(ramble.sentences).toHaveLength(1);
    const [clip] = snapToSentences([candidate(3.13, 12.17)], ramble, { min: 5, max: 15, duration: 40 }, null);
    const pauses = words.slice(1).map((w, i) => ({ start: words[i]!.end, end: w.start })).filter((p) => p.end - p.start > 0.3);
    for (const edge of [clip!.start, clip!.end]) expect(pauses.some((p) => edge > p.start && edge < p.end), `edge ${edge} in a pause`).toBe(true);
    expect(clip!.reasons).not.toContain("complete_thought");
  });

  it("keeps a clip's own edges when no boundary is a pause (every word runs into the next)", () => {
    const ramble = transcriptOf([Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ")]);
    const [clip] = snapToSentences([candidate(3.13, 12.17, ["speech_density", "pause_bounded"])], ramble, { min: 5, max: 15, duration: 40 }, null);
    expect(clip).toMatchObject({ start: 3.13, end: 12.17 });
  });
});

describe("clip edges where speakers overlap (a subtitle track cuts the earlier cue where the next begins)", () => {
  // The guest speaks from 10.0 to 16.5; the host's question starts at 15.0, so the track's guest cue ends at 15.0.
  const cues: Cue[] = [
    { start: 6, end: 8.5, text: "Tell me about the old bakery." },
    { start: 10, end: 15, text: "I think it was the best place in the whole town for bread." },
    { start: 15, end: 17, text: "So why did you leave it?" },
    { start: 18, end: 21, text: "Because the rent doubled in a single year." },
    { start: 22, end: 26, text: "We found a bigger shop near the station instead." },
    { start: 27, end: 31, text: "It was a risk, but the customers followed us there." },
    { start: 32, end: 36, text: "Now we bake twice as much bread every morning." },
  ];
  const transcript = buildTranscript("subtitle_track", "en", wordsFromCues(cues, 60));
  // Where the speech model hears no one: between the sentences, never from 10.0 to 17.0 (two people talking).
  const quiet = [
    { start: 0, end: 5.9 },
    { start: 8.6, end: 9.9 },
    { start: 17.1, end: 17.9 },
    { start: 21.1, end: 21.9 },
    { start: 26.1, end: 26.9 },
    { start: 31.1, end: 31.9 },
    { start: 36.1, end: 60 },
  ];
  const spoken = [{ start: 10, end: 16.5 }, { start: 15, end: 17 }, ...cues.filter((c) => c.start !== 10 && c.start !== 15)];
  const limits = { min: 10, max: 25, duration: 60 };

  it.each([
    ["the speech model's quiet stretches", quiet],
    ["the cue times alone (no speech model)", null],
  ] as const)("with %s: a clip wanted at the question starts where both are silent and takes both sentences whole", (_, given) => {
    const [clip] = snapToSentences([candidate(15, 30, ["speech_density", "pause_bounded"])], transcript, limits, given === null ? null : [...given]);
    expect(clip).toBeDefined();
    for (const edge of [clip!.start, clip!.end]) expect(insideSentence(edge, spoken), `edge ${edge}`).toBe(false);
    expect(clip!.start).toBeLessThan(10);
    expect(clip!.start).toBeGreaterThan(8.5);
    if (given) expect(given.some((q) => clip!.start >= q.start && clip!.start <= q.end)).toBe(true);
    expect(clip!.reasons).toContain("pause_bounded");
  });

  it("a gap in the cue times where the speech model hears someone is not an edge", () => {
    // The model hears speech from 17.1 on (say, a reply the track left out): only 8.6-9.9 is quiet before 26.
    const busy = quiet.filter((q) => q.start < 10 || q.start > 26);
    const [clip] = snapToSentences([candidate(18, 31)], transcript, limits, busy);
    for (const edge of [clip!.start, clip!.end]) {
      expect(busy.some((q) => edge >= q.start && edge <= q.end) || (clip!.start === 18 && clip!.end === 31), `edge ${edge}`).toBe(true);
    }
    expect(clip!.start).not.toBeCloseTo(17.75, 1);
  });

  it("a clip that keeps its edges loses pause_bounded when an edge is where someone speaks", () => {
    const [kept] = snapToSentences([candidate(40, 55, ["speech_density", "pause_bounded"])], transcript, limits, [{ start: 36.1, end: 50 }]);
    expect(kept).toMatchObject({ start: 40, end: 55 });
    expect(kept!.reasons).not.toContain("pause_bounded");
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
