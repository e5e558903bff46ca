/**
 * Judgement in the engine (docs/judgement.md), without media: the candidate
 * pool, the blend of the model's sub-scores with the signals, the tighter
 * edges' bounds, chapters, key-word emphasis in burned and sidecar captions,
 * and a short source's best span. The judging Worker is the Worker's own
 * judgeCandidates over the text-generation stand-in (the only fake).
 */
import { describe, expect, it } from "vitest";
import { ClipConfig, JudgeResult, type JudgeRequest, type StartJob, type Transcript } from "#contract";
import { judgeCandidates } from "../../../src/engine/judge.ts";
import { TextGenerationStandIn, type JudgementStyle } from "../../../test/stand-ins/text-generation.ts";
import { bestAvailable, BEST_AVAILABLE_REASON } from "../../src/analyse/index.ts";
import { buildAss } from "../../src/captions/ass.ts";
import { markEmphasis } from "../../src/captions/emphasis.ts";
import type { CaptionPage } from "../../src/captions/layout.ts";
import { buildVtt } from "../../src/captions/sidecar.ts";
import { proposeCandidates } from "../../src/judge/candidates.ts";
import { combine, modelScore, tightened } from "../../src/judge/combine.ts";
import { judgeStage } from "../../src/judge/stage.ts";
import type { Candidate } from "../../src/shared/types.ts";

/** A transcript of `n` sentences of 4 s with 1 s pauses; every third asks a question. */
function transcript(n: number, text = (i: number) => (i % 3 === 0 ? `Question number ${i} is why?` : `Answer number ${i} is plain.`)): Transcript {
  const sentences = Array.from({ length: n }, (_, i) => ({ text: text(i), start: i * 5, end: i * 5 + 4 }));
  const words = sentences.flatMap((s) => {
    const parts = s.text.split(" ");
    return parts.map((w, k) => ({ text: w, start: s.start + (k * 4) / parts.length, end: s.start + ((k + 1) * 4) / parts.length }));
  });
  return { source: "workers_ai", language: "en", words, sentences };
}

function job(over: Record<string, unknown> = {}): StartJob {
  return {
    job_id: "job_judgeunit000000000",
    token: "token-judge-unit-0123456789",
    video_url: "https://videos.example.com/v.mp4",
    video_type: "podcast",
    config: ClipConfig.parse({ min_clip_seconds: 10, max_clip_seconds: 30, max_clips: 2, ...over }),
    limits: { max_source_bytes: 1e9, max_source_seconds: 7200, download_timeout_seconds: 60 },
  };
}

/** The Worker's route, in process: the Worker's module over the stand-in, a budget that always has room. */
function worker(style: JudgementStyle = {}) {
  const ai = new TextGenerationStandIn([{ kind: "answer", style }]);
  const requests: JudgeRequest[] = [];
  return {
    ai,
    requests,
    judge: async (request: JudgeRequest) => {
      requests.push(request);
      return JudgeResult.parse(await judgeCandidates(ai, "@cf/meta/llama-3.3-70b-instruct-fp8-fast", request, async () => true));
    },
  };
}

const LIMITS = { min: 10, max: 30, from: 0, to: 600 };

describe("the candidate pool", () => {
  it("proposes several times the clips asked, without overlaps, on sentence edges; without a transcript only the analysis's picks", () => {
    const heard = transcript(60);
    const analysed: Candidate[] = [{ start: 0.5, end: 20, score: 0.7, reasons: ["speech_density"] }];
    const windows = Array.from({ length: 40 }, (_, i) => ({ start: i * 7 + 0.5, end: i * 7 + 20, score: 0.5 - i * 0.005, reasons: ["speech_density"] }));
    const pool = proposeCandidates({ analysed, windows, transcript: heard, snapped: true, limits: { min: 10, max: 30, duration: 300 }, quiet: null, clipsWanted: 2 });
    expect(pool.length).toBeGreaterThan(2);
    expect(pool.length).toBeLessThanOrEqual(6);
    expect(pool[0]!.start).toBeLessThan(5);
    const sorted = [...pool].sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.start).toBeGreaterThanOrEqual(sorted[i - 1]!.end - 1e-6);
    expect(proposeCandidates({ analysed, windows, transcript: null, snapped: true, limits: { min: 10, max: 30, duration: 300 }, quiet: null, clipsWanted: 2 })).toEqual(analysed);
  });
});

describe("combining the verdict with the signals", () => {
  const candidate: Candidate = { start: 10, end: 40, score: 0.4, reasons: ["speech_density"] };
  const sentences = [
    { start: 10, end: 14, text: "a" },
    { start: 15, end: 19, text: "b" },
    { start: 20, end: 24, text: "c" },
    { start: 25, end: 29, text: "d" },
    { start: 30, end: 34, text: "e" },
    { start: 35, end: 39.5, text: "f" },
  ];
  const verdict = (over: Partial<Parameters<typeof tightened>[1]> = {}) => ({
    id: 0,
    scores: { hook: 90, payoff: 80, standalone: 70, energy: 60 },
    reason: "Opens on a question.",
    start: 15,
    end: 34,
    title: "T",
    description: "D.",
    hashtags: ["#t"],
    emphasis: ["b"],
    ...over,
  });

  it("takes tighter edges only at the candidate's own sentence boundaries, inside it and the range, of a configured length", () => {
    expect(tightened(candidate, verdict(), sentences, LIMITS)).toEqual({ start: 15, end: 34 });
    // Not a sentence boundary; outside the candidate; outside the range; too short.
    expect(tightened(candidate, verdict({ start: 16 }), sentences, LIMITS)).toEqual({ start: 10, end: 40 });
    expect(tightened(candidate, verdict({ start: 5 }), [{ start: 5, end: 9, text: "z" }, ...sentences], LIMITS)).toEqual({ start: 10, end: 40 });
    expect(tightened(candidate, verdict(), sentences, { ...LIMITS, to: 30 })).toEqual({ start: 10, end: 40 });
    expect(tightened(candidate, verdict({ start: 25, end: 29 }), sentences, LIMITS)).toEqual({ start: 10, end: 40 });
  });

  it("ranks on the blend: a judged clip the model rates highly passes a stronger signal; unjudged ones keep their signal score", () => {
    const strong: Candidate = { start: 100, end: 130, score: 0.8, reasons: ["loudness_peak"] };
    const ranked = combine(
      [
        { candidate: strong, verdict: verdict({ scores: { hook: 10, payoff: 10, standalone: 10, energy: 10 }, start: null, end: null }), sentences: [] },
        { candidate, verdict: verdict(), sentences },
        { candidate: { start: 200, end: 230, score: 0.5, reasons: ["speech_density"] }, verdict: null, sentences: [] },
      ],
      { ...LIMITS, to: 600 },
      3,
      true,
    );
    expect(ranked.map((r) => r.index)).toEqual([1, 2, 0]);
    const top = ranked[0]!.candidate;
    expect(top.score).toBeCloseTo(0.4 * 0.4 + 0.6 * modelScore({ hook: 90, payoff: 80, standalone: 70, energy: 60 }), 3);
    expect(top).toMatchObject({ start: 15, end: 34, reasons: ["Opens on a question.", "speech_density"] });
    expect(top.judged).toEqual({ scores: { hook: 90, payoff: 80, standalone: 70, energy: 60 }, title: "T", description: "D.", hashtags: ["#t"], emphasis: ["b"] });
    expect(ranked[1]!.candidate.judged).toBeUndefined();
    // caption_emphasis off: no key words.
    expect(combine([{ candidate, verdict: verdict(), sentences }], LIMITS, 1, false)[0]!.candidate.judged!.emphasis).toEqual([]);
  });
});

describe("the judgement stage", () => {
  it("puts the clip the model ranks first first, with its post, edges and scores, and names the model", async () => {
    const heard = transcript(40, (i) => (i === 21 ? "Why does this one matter so much?" : i === 22 ? "Because the secret ingredient is patience!" : `Plain sentence number ${i}.`));
    const pool: Candidate[] = [0, 50, 100, 150].map((start, i) => ({ start, end: start + 19, score: 0.6 - i * 0.05, reasons: ["speech_density"] }));
    const w = worker({ favourite: "secret ingredient" });
    const result = await judgeStage({ job: job(), reporter: w, pool, transcript: heard, limits: { ...LIMITS, to: 200 }, sourceSeconds: 200, transcriptReason: null });
    expect(w.requests).toHaveLength(1);
    expect(w.requests[0]!.candidates).toHaveLength(4);
    expect(result.judgement).toEqual({ judged_by: "model", model: "@cf/meta/llama-3.3-70b-instruct-fp8-fast", fallback_reason: null });
    expect(result.candidates).toHaveLength(2);
    const top = result.candidates[0]!;
    expect(result.order[0]).toBe(2);
    // It starts on the question (sentence 21 at 105 s), the stand-in's hook, and ends on the last sentence.
    expect(top.start).toBe(105);
    expect(top.judged).toMatchObject({ scores: { hook: 95, payoff: 95, standalone: 95, energy: 95 }, title: "Why does this one matter so much?", hashtags: ["#ingredient", "#clip"], emphasis: ["ingredient"] });
    expect(result.chapters).toEqual([]);
  });

  it("falls back to signals, saying why, with no transcript, no answer, or an answer that judged nothing", async () => {
    const pool: Candidate[] = [
      { start: 0, end: 19, score: 0.3, reasons: ["a"] },
      { start: 50, end: 69, score: 0.6, reasons: ["b"] },
    ];
    const none = await judgeStage({ job: job(), reporter: worker(), pool, transcript: null, limits: LIMITS, sourceSeconds: 100, transcriptReason: "No speech." });
    expect(none.judgement).toEqual({ judged_by: "signals", model: null, fallback_reason: "No transcript to judge the clips from. No speech." });
    // The pool's own order (best signal first), as without judgement.
    expect(none.candidates.map((c) => c.start)).toEqual([0, 50]);
    const lost = await judgeStage({ job: job(), reporter: { judge: async () => null }, pool, transcript: transcript(20), limits: LIMITS, sourceSeconds: 100, transcriptReason: null });
    expect(lost.judgement.fallback_reason).toBe("The judgement request got no answer.");
    expect(lost.candidates.every((c) => c.judged === undefined)).toBe(true);
    const failing = new TextGenerationStandIn([{ kind: "throw", message: "3036: Account limited" }]);
    const refused = await judgeStage({
      job: job(),
      reporter: { judge: (r) => judgeCandidates(failing, "@cf/meta/llama-3.3-70b-instruct-fp8-fast", r, async () => true, { attempts: 1, baseDelayMs: 1, attemptTimeoutMs: 1000, budgetMs: 1000 }) },
      pool,
      transcript: transcript(20),
      limits: LIMITS,
      sourceSeconds: 100,
      transcriptReason: null,
    });
    expect(refused.judgement).toEqual({ judged_by: "signals", model: null, fallback_reason: "Workers AI's quota or capacity was reached." });
  });

  it("gives a 40-minute conversation chapters, titled by the model", async () => {
    const heard = transcript(480);
    const pool: Candidate[] = [{ start: 0, end: 19, score: 0.5, reasons: ["a"] }];
    const w = worker();
    const result = await judgeStage({ job: job(), reporter: w, pool, transcript: heard, limits: { ...LIMITS, to: 2400 }, sourceSeconds: 2400, transcriptReason: null });
    expect(result.chapters).toHaveLength(8);
    expect(result.chapters[0]).toEqual({ title: "Part 1", start_seconds: 0 });
    expect(result.chapters.map((c) => c.start_seconds)).toEqual([0, 300, 600, 900, 1200, 1500, 1800, 2100]);
  });
});

describe("emphasis in captions", () => {
  const pages: CaptionPage[] = [
    { start: 0, end: 2, lines: [[{ text: "The", start: 0, end: 0.5 }, { text: "secret", start: 0.5, end: 1 }, { text: "<b>sauce</b>,", start: 1, end: 2 }]] },
    { start: 2, end: 3, lines: [[{ text: "nothing", start: 2, end: 3 }]] },
  ];

  it("marks the key words, wraps them in <b> in the WebVTT with the text still escaped, and colours them when burned", () => {
    const marked = markEmphasis(pages, ["secret b sauce b"]);
    // Whole words, case and punctuation aside: "<b>sauce</b>," reads "bsauceb", not the phrase.
    expect(marked[0]!.lines[0]!.filter((w) => w.emphasis).map((w) => w.text)).toEqual([]);
    const again = markEmphasis(pages, ["Secret"]);
    const vtt = buildVtt(again);
    expect(vtt).toContain("The <b>secret</b> &lt;b&gt;sauce&lt;/b&gt;,");
    expect(vtt).toContain("\nnothing\n");
    const ass = buildAss({ pages: again, metrics: { fontSize: 40, lineChars: 30, maxLines: 2 }, style: "clean", position: "bottom", width: 720, height: 1280, brand: { font: "DejaVu Sans", text: "#FFFFFF", highlight: "#FF0000", outline: "#000000", box: "#000000" }, language: "en" });
    expect(ass).toMatch(/\{\\c&H0000FF&\}secret\{\\c&HFFFFFF&\}/);
    expect(ass).not.toMatch(/\{\\c&H0000FF&\}The/);
  });
});

describe("a short source", () => {
  it("gives its best span, ranked low, with its reason; with no window at all, its opening", () => {
    const best = bestAvailable([{ start: 1, end: 15, score: 0.12, reasons: ["speech_density"] }, { start: 2, end: 16, score: 0.05, reasons: [] }], { min: 10, max: 17, duration: 17.6 });
    expect(best).toEqual({ start: 1, end: 15, score: 0.1, reasons: [BEST_AVAILABLE_REASON, "speech_density"] });
    expect(bestAvailable([], { min: 10, max: 17, duration: 17.6 })).toEqual({ start: 0, end: 17, score: 0, reasons: [BEST_AVAILABLE_REASON] });
  });
});
