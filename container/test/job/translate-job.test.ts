/**
 * Captions in the viewer's language, end to end: a job on real
 * speech (the speech suite's espeak-ng narration, English, with a subtitle
 * track) asks for `caption_language: "fr"`. The fake Worker answers the
 * engine's /translate route with the Worker's own translateTexts
 * (src/engine/translate.ts) over the Workers AI stand-in, shaped as
 * @cf/meta/m2m100-1.2b documents its input and output: the only fake.
 *
 * Checked: the job says its captions were translated; the clip's text and
 * title and its WebVTT/SRT sidecars are in French; every cue keeps the time
 * its sentence was spoken (first cue starts and last cue ends with the
 * sentence), while the clip's edges stay on the spoken sentences; and the
 * burned captions read back (OCR) in French.
 */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, CompleteReport, ProgressReport, TranslateRequest, type StartJob } from "#contract";
import { cachedNarration, type Narration } from "../../../test/media/narration.ts";
import { M2M100StandIn } from "../../../test/worker/m2m100-stand-in.ts";
import { translateTexts, type TranslationAi } from "../../../src/engine/translate.ts";
import { runJob } from "../../src/job/run.ts";
import { JobReporter } from "../../src/channel/report.ts";
import { translateCaptions } from "../../src/transcript/translate.ts";
import { buildTranscript } from "../../src/transcript/build.ts";
import { anyAddressPolicy } from "../../src/source/address-policy.ts";
import { parseCaptions } from "../../src/transcript/cues.ts";
import { newJobId, testConfig } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { ocrBand } from "../helpers/pixels.ts";
import { SCRIPT } from "../helpers/script.ts";
import { startRecordingServer, type RecordingServer } from "../helpers/servers.ts";

/** The stand-in's phrase book: each sentence of the script, in French (no accents, for the OCR check). */
const FRENCH: Record<string, string> = {
  "Why do people love short videos so much?": "Pourquoi les gens aiment-ils tant les videos courtes ?",
  "Because a short clip respects your time and gets to the point.": "Parce qu'un clip court respecte votre temps et va droit au but.",
  "A good clip starts with a question and ends with its answer.": "Un bon clip commence par une question et finit par sa reponse.",
  "That is what our editors look for every single day.": "Voila ce que nos monteurs cherchent chaque jour.",
  "What makes a moment worth sharing with friends?": "Qu'est-ce qui rend un moment digne d'etre partage avec des amis ?",
  "Surprise, humour and a clear idea in very few words.": "La surprise, l'humour et une idee claire en tres peu de mots.",
  "Long pauses and half sentences make viewers scroll away.": "Les longues pauses et les demi-phrases font fuir les spectateurs.",
  "So we cut at sentence ends and never inside a word.": "Alors nous coupons en fin de phrase et jamais dans un mot.",
  "How long should a clip be on a phone screen?": "Combien de temps doit durer un clip sur un ecran de telephone ?",
  "Around twenty seconds is plenty for one complete thought.": "Environ vingt secondes suffisent pour une pensee complete.",
  "Captions matter because most people watch without sound.": "Les sous-titres comptent car la plupart des gens regardent sans le son.",
  "Large bold words help everyone follow the story.": "Des mots grands et gras aident chacun a suivre l'histoire.",
};

const runner = nativeRunner();
const tokens = new Map<string, string>();
const ai = new M2M100StandIn({ fr: FRENCH });
let worker: FakeWorker;
let server: RecordingServer;
let narration: Narration;
let uploads: string;
let workRoot: string;

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  narration = await cachedNarration({ sentences: SCRIPT, bedDb: 18, subtitleTrack: true, gapSeconds: 0.9 });
  const size = (await stat(narration.path)).size;
  server = await startRecordingServer((req, res) => {
    if (req.url === "/talk.mp4") {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
      createReadStream(narration.path).pipe(res);
    } else res.writeHead(404).end();
  });
  uploads = await osTempDir("translate-uploads");
  workRoot = await osTempDir("translate-work");
  worker = await startFakeWorker(tokens, uploads);
  // The Worker's route body: the contract's TranslateRequest, translated by the Worker's own module.
  worker.behaviour.translate = async ({ body }) => {
    const request = TranslateRequest.parse(body);
    return { status: 200, body: await translateTexts(ai.binding<TranslationAi>(), request) };
  };
}, 180_000);

afterAll(async () => {
  await worker?.close();
  await server?.close();
  await removeTempDirs();
});

describe("a job with caption_language", () => {
  let jobId: string;
  let report: CompleteReport;
  beforeAll(async () => {
    jobId = newJobId("translate");
    const token = `token-${jobId}-abcdefghijkl`;
    tokens.set(jobId, token);
    const job: StartJob = {
      job_id: jobId,
      token,
      video_url: server.url("/talk.mp4"),
      video_type: "podcast",
      config: ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 8, max_clip_seconds: 16, max_clips: 1, caption_style: "clean", caption_language: "fr" }),
      limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 60 },
    };
    const outcome = await runJob(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy }, new AbortController());
    expect(outcome, JSON.stringify(worker.callsFor(jobId, "fail")[0]?.body)).toBe("completed");
    report = CompleteReport.parse(worker.callsFor(jobId, "complete")[0]?.body);
  }, 300_000);

  it("translates through the Worker's route with the model's documented input", () => {
    expect(report.translation).toEqual({ language: "fr", status: "translated", detail: null });
    expect(report.transcript).toMatchObject({ source: "subtitle_track", language: "en" });
    expect(ai.calls.length).toBeGreaterThan(0);
    for (const call of ai.calls) {
      expect(call.model).toBe("@cf/meta/m2m100-1.2b");
      expect(call.inputs).toMatchObject({ source_lang: "en", target_lang: "fr" });
      expect(typeof call.inputs.text).toBe("string");
    }
    // Only the clip's sentences (and its title) were sent, not the whole transcript.
    const sent = worker.callsFor(jobId, "translate").flatMap((c) => TranslateRequest.parse(c.body).texts);
    expect(sent.length).toBeLessThan(SCRIPT.length);
    const steps = worker.callsFor(jobId, "progress").map((c) => ProgressReport.parse(c.body).step);
    expect(steps).toContain("Translating captions into French");
  });

  it("gives the clip French text and title, its edges still on the spoken sentences", () => {
    const clip = report.clips[0]!;
    const own = narration.sentences.filter((s) => (s.start + s.end) / 2 >= clip.start_seconds && (s.start + s.end) / 2 < clip.end_seconds);
    expect(own.length).toBeGreaterThan(0);
    expect(clip.text).toBe(own.map((s) => FRENCH[s.text]).join(" "));
    for (const edge of [clip.start_seconds, clip.end_seconds]) {
      expect(narration.sentences.find((s) => edge > s.start && edge < s.end), `edge ${edge}`).toBeUndefined();
    }
    expect(clip.title).not.toBeNull();
    // A title the phrase book knows is in French; one it does not comes back marked as translated.
    expect(Object.values(FRENCH).includes(clip.title!) || clip.title!.startsWith("[fr] ")).toBe(true);
  });

  it("writes French sidecars whose cues keep the spoken sentences' times", async () => {
    const clip = report.clips[0]!;
    expect(clip.sidecars).toBe(true);
    const vtt = parseCaptions(await readFile(path.join(uploads, `${jobId}-0.vtt`), "utf8")).cues;
    const srt = parseCaptions(await readFile(path.join(uploads, `${jobId}-0.srt`), "utf8")).cues;
    expect(srt).toEqual(vtt);
    const own = narration.sentences.filter((s) => (s.start + s.end) / 2 >= clip.start_seconds && (s.start + s.end) / 2 < clip.end_seconds);
    let cue = 0;
    for (const sentence of own) {
      const french = FRENCH[sentence.text]!;
      // The sentence's cues, in order, spell its translation.
      const mine: typeof vtt = [];
      let text = "";
      while (cue < vtt.length && text.replace(/\s+/g, " ").trim() !== french) {
        mine.push(vtt[cue]!);
        text += ` ${vtt[cue]!.text}`;
        cue++;
      }
      expect(text.replace(/\s+/g, " ").trim()).toBe(french);
      const start = Math.max(0, sentence.start - clip.start_seconds);
      const end = Math.min(clip.end_seconds, sentence.end) - clip.start_seconds;
      expect(mine[0]!.start).toBeCloseTo(start, 2);
      expect(mine.at(-1)!.end).toBeCloseTo(end, 2);
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.start).toBeCloseTo(mine[i - 1]!.end, 3);
    }
    expect(cue).toBe(vtt.length);
  });

  it("burns the French captions (OCR)", async () => {
    const vtt = parseCaptions(await readFile(path.join(uploads, `${jobId}-0.vtt`), "utf8")).cues;
    const first = vtt[0]!;
    const words = await ocrBand(path.join(uploads, `${jobId}-0.mp4`), (first.start + first.end) / 2, { top: 853, bottom: 1280 }, "eng", 1);
    const norm = (w: string) => w.toLowerCase().replace(/[^a-z]/g, "");
    const read = new Set(words.map((w) => norm(w.text)));
    const expected = first.text.split(/\s+/).map(norm).filter((w) => w.length > 2);
    const found = expected.filter((w) => read.has(w));
    expect(found.length / expected.length, `read ${[...read].join(" ")}`).toBeGreaterThanOrEqual(0.6);
  });
});

describe("captions that stay in the spoken language", () => {
  const words = [
    { text: "Welcome", start: 0.2, end: 0.6 },
    { text: "back.", start: 0.6, end: 1.0 },
  ];
  function reporterFor(jobId: string): JobReporter {
    const token = `token-${jobId}-abcdefghijkl`;
    tokens.set(jobId, token);
    return new JobReporter({ callbackBase: worker.base, jobId, token, attempts: 2, retryBaseMs: 10, timeoutMs: 10_000, onInactive: () => undefined });
  }
  const request = (jobId: string, language: string | null, hint: string | null = null) => ({
    reporter: reporterFor(jobId),
    transcript: buildTranscript("captions_url", language, words),
    clips: [{ start: 0, end: 2 }],
    titles: ["Welcome back"],
    target: "fr" as const,
    hint,
    jobId,
  });

  it("says so when the Worker's model keeps failing (502) or it cannot translate (503)", async () => {
    const saved = worker.behaviour.translate;
    try {
      worker.behaviour.translate = async () => ({ status: 502, body: { code: "translation_failed", status: 502 } });
      const failed = await translateCaptions(request(newJobId("tr-failed"), "en"));
      expect(failed.outcome).toMatchObject({ language: "fr", status: "failed" });
      expect(failed.translation).toBeNull();
      expect(failed.note).toBe("captions stay in English: translation failed");
      worker.behaviour.translate = undefined; // the fake Worker's default: 503, as without an AI binding
      const unavailable = await translateCaptions(request(newJobId("tr-unavailable"), "en"));
      expect(unavailable.outcome).toMatchObject({ status: "unavailable" });
      expect(unavailable.note).toBe("captions stay in English: no translation here");
    } finally {
      worker.behaviour.translate = saved;
    }
  });

  it("asks nothing when the captions are already in that language, or the spoken one is unknown", async () => {
    const before = worker.calls.filter((c) => c.kind === "translate").length;
    expect((await translateCaptions(request(newJobId("tr-same"), "fr"))).outcome).toEqual({ language: "fr", status: "not_needed", detail: null });
    // The hint wins over what the source said.
    expect((await translateCaptions(request(newJobId("tr-hint"), "en", "fr"))).outcome.status).toBe("not_needed");
    const unknown = await translateCaptions(request(newJobId("tr-unknown"), null));
    expect(unknown.outcome.status).toBe("skipped");
    expect(unknown.outcome.detail).toContain("send `language`");
    expect(worker.calls.filter((c) => c.kind === "translate").length).toBe(before);
  });
});
