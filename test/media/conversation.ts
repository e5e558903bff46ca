/**
 * Conversations for the clip-quality suite: several espeak-ng voices taking
 * turns at known times, sometimes talking over each other, laughing after an
 * emphatic exchange, between a music intro and outro, over an optional quiet
 * bed, with an optional subtitle track of one cue per sentence.
 *
 * API
 *   generateConversation(spec): Promise<Conversation>
 *     Writes an MP4 (tiny H.264 picture, AAC mono) at spec.outPath and returns
 *     where every sentence, laugh, highlight, intro and outro is.
 *   cachedConversation(spec, dir = ".tmp/media"): Promise<Conversation>
 *     Same, reusing a file made earlier from the same spec.
 *   conversationSrt(cues): string
 *     Cues as SubRip (what the subtitle track is made from).
 *
 * How a conversation is made
 *   - Turns: a speaker (never the one who just spoke) says one to three
 *     sentences drawn from a fixed pool (some with commas, whose pauses are
 *     pauses between words, not sentences), separated by spec.sentenceGap;
 *     turns are separated by spec.turnGap. A share of turns (spec.overlapShare)
 *     starts before the previous sentence ends (spec.overlapSeconds early),
 *     and a share of long sentences gets a short reply ("Right.") from another
 *     speaker in its middle (spec.backchannelShare).
 *   - Highlights: spec.highlights emphatic exchanges spread evenly over the
 *     conversation: one speaker says two sentences faster and 6 dB louder, and
 *     the others laugh ("ha ha ha", high and fast) over the end of the second.
 *   - Levels: every spoken clip is scaled to REFERENCE_VOICE_DBFS RMS (plus
 *     6 dB when emphatic); the intro and outro are the music bed of
 *     test/media/beds.ts at the voice's level; spec.bedDb puts the same music
 *     that many dB below the voice under the whole conversation.
 *   - Spans are exact to one sample at 22,050 Hz: each clip is trimmed to its
 *     sound (test/media/espeak.ts) and placed at a whole sample.
 *   - Subtitle track (spec.subtitleTrack): one cue per sentence with its true
 *     span, muxed as mov_text. That format cannot hold overlapping cues:
 *     ffmpeg cuts a cue where the next one begins, as a real track would.
 *
 * Cheap at any length: each (sentence, voice, speed) is spoken once and
 * reused; the mix is written in ten-second chunks (memory stays flat); the
 * picture is a 20-second 160x90 clip at 5 fps stream-copied in a loop; the
 * audio is the only thing encoded (FLAC for long sources, spec.audioCodec). espeak-ng and ffmpeg (FFMPEG_PATH) must be
 * installed; commands are argument arrays, never a shell.
 */
import { createHash } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { commitCached, partialPath } from "./cache.ts";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { once } from "node:events";
import { makeBed, rng } from "./beds.ts";
import { ESPEAK_RATE, runTool, speakSentence } from "./espeak.ts";

const RATE = ESPEAK_RATE;
/** Bump when the generator's output changes, so cached files are remade. */
const VERSION = 1;
export const REFERENCE_VOICE_DBFS = -20;
const EMPHASIS_DB = 6;
const SPEED_PLAIN = 165;
const SPEED_EMPHATIC = 205;
const SPEED_LAUGH = 240;
/** Silence between the intro's music and the first sentence, and between the last sound and the outro. */
const MUSIC_MARGIN_SECONDS = 1;
/** The intro fades out (and the outro in) over this long, inside their spans. */
const MUSIC_FADE_SECONDS = 0.5;
/** Music bed period: four two-second chords, a whole number of eighth notes, so tiles join seamlessly. */
const BED_TILE_SECONDS = 16;
const CHUNK_SECONDS = 10;

/** Things people say in a long talk show: questions, answers, asides with commas. */
export const CONVERSATION_POOL: readonly string[] = [
  "So tell me, how did the whole thing start?",
  "It started with a small bakery on a very quiet street.",
  "We had no money, no plan, and honestly no idea what we were doing.",
  "What made you keep going when it got hard?",
  "The people who came back every morning for their bread.",
  "That is a lovely way to put it.",
  "Did you ever think about giving up?",
  "Of course, every winter, when the ovens broke down again.",
  "Winters are always the hardest part of the year for us.",
  "I remember the first loaf we sold, it was completely burnt.",
  "And the customer still paid for it, which surprised all of us.",
  "Where do you find the ideas for new recipes?",
  "Mostly from travelling, and from my grandmother's old notebooks.",
  "Her handwriting is almost impossible to read.",
  "How many people work with you today?",
  "About forty, spread over three shops and a small kitchen.",
  "That is a big team for a family business.",
  "It is, and we still eat lunch together every Friday.",
  "What would you tell someone who wants to open a shop?",
  "Start small, listen to your customers, and keep your prices fair.",
  "Do not borrow more money than you can pay back in a year.",
  "Is there anything you would do differently now?",
  "I would take more holidays, and I would sleep a little more.",
  "The early mornings never really get easier.",
  "We start baking at three, long before anyone else is awake.",
  "Why does the bread taste so different from the supermarket?",
  "Time, mostly, because the dough rests for a whole day.",
  "Good flour matters too, but patience matters more.",
  "Which bread sells best in your shops?",
  "A simple rye loaf, the same one we made on the first day.",
  "People like things that remind them of home.",
  "How has the neighbourhood changed over the years?",
  "There are more families now, and far more dogs.",
  "The dogs get a biscuit, and the owners buy the bread.",
  "What is next for the business?",
  "A bakery school, so young people can learn the craft properly.",
  "We already have twelve students waiting for the first class.",
  "That sounds like a wonderful plan.",
  "Thank you, we are all very excited about it.",
  "Before we finish, what is your favourite thing to bake?",
  "Cinnamon buns, because the whole street smells of them.",
  "Honestly, I could eat them every single day of the week.",
];

/** Emphatic lines for the highlights (said faster and louder, then laughed at). */
export const HIGHLIGHT_POOL: readonly string[] = [
  "I once sold a wedding cake that was actually three birthday cakes!",
  "The mayor came in wearing his pyjamas to buy a croissant!",
  "Our oven caught fire on the very day the newspaper came to visit!",
  "A goat walked into the shop and ate a whole tray of scones!",
  "My brother proposed to his wife with a ring baked into a bun!",
  "We once baked a loaf so big it would not fit through the door!",
  "The health inspector asked for the recipe and then a second slice!",
  "Somebody paid for a single bagel with a jar full of coins!",
];

const BACKCHANNELS: readonly string[] = ["Right.", "Yes.", "Exactly.", "Mm hm."];
const LAUGH_TEXT = "Ha ha ha ha ha!";

export interface Interval {
  start: number;
  end: number;
}

export interface ConversationSpec {
  /** One espeak-ng voice per speaker (at least two). */
  speakers: readonly string[];
  /** Minutes of conversation (intro and outro aside); turns are added until it is reached. */
  minutes: number;
  /** Music alone before the conversation (seconds; 0 or absent: none). */
  introSeconds?: number;
  /** Music alone after it (seconds; 0 or absent: none). */
  outroSeconds?: number;
  /** Quiet music under the conversation, this many dB below the voice; none when absent. */
  bedDb?: number;
  /** Pause between sentences of one turn, drawn in [min, max] seconds; default [0.45, 0.8]. */
  sentenceGap?: [number, number];
  /** Pause between turns, drawn in [min, max] seconds; default [0.5, 1.2]. */
  turnGap?: [number, number];
  /** Share of turns that start before the previous sentence ends; default 0. */
  overlapShare?: number;
  /** How early such a turn starts (seconds), drawn in [min, max]; default [0.8, 1.8]. */
  overlapSeconds?: [number, number];
  /** Share of sentences with a comma spoken with a hesitation there (a pause inside the sentence); default 0. */
  hesitationShare?: number;
  /** How long such a hesitation lasts (seconds), drawn in [min, max]; default [0.3, 0.6]. */
  hesitationSeconds?: [number, number];
  /** Share of long sentences answered in their middle by a short "Right." from another speaker; default 0. */
  backchannelShare?: number;
  /** Emphatic exchanges followed by laughter, spread evenly; default 0. */
  highlights?: number;
  subtitleTrack?: boolean;
  /**
   * "aac" (default) as real sources carry it, or "flac": lossless and about
   * ten times cheaper to encode, for long sources where only the analysis is
   * judged.
   */
  audioCodec?: "aac" | "flac";
  seed: number;
  outPath: string;
}

export interface ConversationSentence extends Interval {
  text: string;
  speaker: number;
  voice: string;
  emphatic: boolean;
  /** A short reply spoken over another speaker's sentence. */
  backchannel: boolean;
  /** The pause inside the sentence where the speaker hesitated, if they did. */
  hesitation?: Interval;
}

export interface Conversation {
  path: string;
  durationSeconds: number;
  /** Every sentence of every speaker, by start time (they may overlap). */
  sentences: ConversationSentence[];
  /** Laughter, by start time. */
  laughs: Interval[];
  /** Each highlight's emphatic sentences, first start to last end: what a clip should hold. */
  highlights: Interval[];
  intro: Interval | null;
  outro: Interval | null;
  /** The cues the subtitle track was made from (true spans, one per sentence); empty without a track. */
  cues: { start: number; end: number; text: string }[];
  /** Turns that started before the previous sentence ended. */
  overlaps: number;
}

function timestamp(t: number): string {
  const ms = Math.round(t * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
}

export function conversationSrt(cues: Conversation["cues"]): string {
  return `${cues.map((c, i) => `${i + 1}\n${timestamp(c.start)} --> ${timestamp(c.end)}\n${c.text}`).join("\n\n")}\n`;
}

function rmsOf(samples: Float32Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

const dbToGain = (db: number) => 10 ** (db / 20);

interface Placed {
  from: number;
  samples: Float32Array;
  gain: number;
}

/** Spoken clips, each made once per (text, voice, speed). */
class Voices {
  private readonly made = new Map<string, Float32Array>();
  constructor(private readonly dir: string) {}
  async say(text: string, voice: string, speed: number): Promise<Float32Array> {
    const key = `${voice}|${speed}|${text}`;
    const known = this.made.get(key);
    if (known) return known;
    const samples = await speakSentence(text, voice, speed, this.dir, `clip-${this.made.size}`);
    this.made.set(key, samples);
    return samples;
  }
}

interface Timeline {
  sentences: ConversationSentence[];
  laughs: Interval[];
  highlights: Interval[];
  placed: Placed[];
  overlaps: number;
  /** Sample where the last sound ends. */
  end: number;
}

async function planConversation(spec: ConversationSpec, voices: Voices, firstSample: number): Promise<Timeline> {
  const random = rng(spec.seed);
  const between = (range: [number, number]) => range[0] + random() * (range[1] - range[0]);
  const sentenceGap = spec.sentenceGap ?? [0.45, 0.8];
  const turnGap = spec.turnGap ?? [0.5, 1.2];
  const overlapSeconds = spec.overlapSeconds ?? [0.8, 1.8];
  const speakers = spec.speakers;
  if (speakers.length < 2) throw new Error("a conversation needs at least two speakers");
  const limit = firstSample + Math.round(spec.minutes * 60 * RATE);
  const highlightCount = spec.highlights ?? 0;
  const highlightAt = Array.from({ length: highlightCount }, (_, k) => firstSample + Math.round(((k + 0.5) / highlightCount) * (limit - firstSample)));

  const t: Timeline = { sentences: [], laughs: [], highlights: [], placed: [], overlaps: 0, end: firstSample };
  const place = async (text: string, speaker: number, from: number, opts: { emphatic?: boolean; backchannel?: boolean; hesitate?: boolean } = {}) => {
    const voice = speakers[speaker]!;
    const speed = opts.emphatic ? SPEED_EMPHATIC : SPEED_PLAIN;
    const comma = text.indexOf(", ");
    // A hesitation: the sentence is spoken in two parts with a pause at its first comma.
    const parts = opts.hesitate && comma > 0 ? [text.slice(0, comma + 1), text.slice(comma + 2)] : [text];
    const spoken: Float32Array[] = [];
    for (const part of parts) spoken.push(await voices.say(part, voice, speed));
    const level = dbToGain(REFERENCE_VOICE_DBFS + (opts.emphatic ? EMPHASIS_DB : 0));
    let at = from;
    let hesitation: Interval | undefined;
    for (const [k, samples] of spoken.entries()) {
      if (k > 0) {
        const pause = Math.round(between(spec.hesitationSeconds ?? [0.3, 0.6]) * RATE);
        hesitation = { start: at / RATE, end: (at + pause) / RATE };
        at += pause;
      }
      t.placed.push({ from: at, samples, gain: level / rmsOf(samples) });
      at += samples.length;
    }
    const sentence: ConversationSentence = {
      text, speaker, voice, emphatic: opts.emphatic ?? false, backchannel: opts.backchannel ?? false,
      start: from / RATE, end: at / RATE, ...(hesitation ? { hesitation } : {}),
    };
    t.sentences.push(sentence);
    t.end = Math.max(t.end, at);
    return sentence;
  };

  let at = firstSample;
  let speaker = 0;
  let last: ConversationSentence | null = null;
  let nextHighlight = 0;
  while (at < limit) {
    const others = speakers.map((_, i) => i).filter((i) => i !== speaker);
    const nextSpeaker = last ? others[Math.floor(random() * others.length)]! : 0;
    if (nextHighlight < highlightAt.length && at >= highlightAt[nextHighlight]!) {
      // An emphatic exchange: two lines said faster and louder, the others laugh over the end of the second.
      nextHighlight++;
      const first = await place(HIGHLIGHT_POOL[(nextHighlight * 2 - 2) % HIGHLIGHT_POOL.length]!, nextSpeaker, at, { emphatic: true });
      const secondFrom = Math.round((first.end + between(sentenceGap)) * RATE);
      const second = await place(HIGHLIGHT_POOL[(nextHighlight * 2 - 1) % HIGHLIGHT_POOL.length]!, nextSpeaker, secondFrom, { emphatic: true });
      t.highlights.push({ start: first.start, end: second.end });
      let laughEnd = second.end;
      for (const [laugher, voice] of speakers.entries()) {
        if (laugher === nextSpeaker) continue;
        const from = Math.round((second.end - 0.4 + 0.25 * laugher) * RATE);
        const samples = await voices.say(LAUGH_TEXT, voice, SPEED_LAUGH);
        // Laughter sits a little below the voices.
        t.placed.push({ from, samples, gain: dbToGain(REFERENCE_VOICE_DBFS - 3) / rmsOf(samples) });
        t.laughs.push({ start: from / RATE, end: (from + samples.length) / RATE });
        laughEnd = Math.max(laughEnd, (from + samples.length) / RATE);
      }
      t.end = Math.max(t.end, Math.round(laughEnd * RATE));
      speaker = nextSpeaker;
      last = second;
      at = Math.round((laughEnd + between(turnGap)) * RATE);
      continue;
    }
    // An ordinary turn, perhaps starting over the end of the previous sentence.
    let from = at;
    if (last && random() < (spec.overlapShare ?? 0)) {
      const early = between(overlapSeconds);
      if (last.end - last.start > early + 1) {
        from = Math.round((last.end - early) * RATE);
        t.overlaps++;
      }
    }
    const count = 1 + Math.floor(random() * 3);
    for (let k = 0; k < count && from < limit; k++) {
      const text = CONVERSATION_POOL[Math.floor(random() * CONVERSATION_POOL.length)]!;
      const sentence = await place(text, nextSpeaker, from, { hesitate: random() < (spec.hesitationShare ?? 0) });
      if (random() < (spec.backchannelShare ?? 0) && sentence.end - sentence.start > 3) {
        const replier = others.find((i) => i !== nextSpeaker) ?? speaker;
        const reply = BACKCHANNELS[Math.floor(random() * BACKCHANNELS.length)]!;
        await place(reply, replier, Math.round((sentence.start + 1.2) * RATE), { backchannel: true });
      }
      last = sentence;
      from = Math.round((Math.max(sentence.end, t.end / RATE) + between(sentenceGap)) * RATE);
    }
    speaker = nextSpeaker;
    at = Math.round((t.end / RATE + between(turnGap)) * RATE);
  }
  t.sentences.sort((a, b) => a.start - b.start);
  t.laughs.sort((a, b) => a.start - b.start);
  return t;
}

/** Writes the mix as s16le mono in chunks: bed, music intro and outro, and every placed clip. */
async function writeMix(path: string, total: number, timeline: Timeline, spec: ConversationSpec, intro: Interval | null, outro: Interval | null): Promise<void> {
  const tile = makeBed("music", BED_TILE_SECONDS, RATE, spec.seed);
  const tileGain = dbToGain(REFERENCE_VOICE_DBFS) / rmsOf(tile);
  const bedLevel = spec.bedDb === undefined ? 0 : dbToGain(-spec.bedDb);
  // Level of the music (relative to the voice) at time t: full in the intro and outro, the bed between them.
  const musicLevel = (t: number): number => {
    let level = bedLevel;
    if (intro) level = Math.max(level, Math.min(1, Math.max(0, (intro.end - t) / MUSIC_FADE_SECONDS)));
    if (outro) level = Math.max(level, Math.min(1, Math.max(0, (t - outro.start) / MUSIC_FADE_SECONDS)));
    return level;
  };
  const placed = [...timeline.placed].sort((a, b) => a.from - b.from);
  const out = createWriteStream(path);
  const chunk = CHUNK_SECONDS * RATE;
  const mix = new Float32Array(chunk);
  // The level only changes in the intro and outro: elsewhere it is the bed's, computed once.
  const steady = bedLevel * tileGain;
  const changing = (n: number) => (intro !== null && n < intro.end * RATE) || (outro !== null && n >= outro.start * RATE);
  let first = 0;
  for (let from = 0; from < total; from += chunk) {
    const length = Math.min(chunk, total - from);
    for (let i = 0; i < length; i++) {
      const n = from + i;
      mix[i] = tile[n % tile.length]! * (changing(n) ? tileGain * musicLevel(n / RATE) : steady);
    }
    while (first < placed.length && placed[first]!.from + placed[first]!.samples.length <= from) first++;
    for (let p = first; p < placed.length && placed[p]!.from < from + length; p++) {
      const clip = placed[p]!;
      const lo = Math.max(from, clip.from);
      const hi = Math.min(from + length, clip.from + clip.samples.length);
      for (let n = lo; n < hi; n++) mix[n - from]! += clip.samples[n - clip.from]! * clip.gain;
    }
    // s16le: the machines this runs on are little-endian, so the samples are written in place.
    const pcm = new Int16Array(length);
    for (let i = 0; i < length; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round(mix[i]! * 32767)));
    if (!out.write(Buffer.from(pcm.buffer))) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

/** The looping picture: 20 s of a moving test pattern, 160x90 at 5 fps, a keyframe every 2 s. */
async function loopPicture(dir: string): Promise<string> {
  const path = resolve(dir, `conversation-picture-v${VERSION}.mp4`);
  if (existsSync(path)) return path;
  await mkdir(dir, { recursive: true });
  const partial = `${path}.${process.pid}.partial.mp4`;
  await runTool(process.env.FFMPEG_PATH || "ffmpeg", [
    "-nostdin", "-v", "error", "-y",
    "-f", "lavfi", "-i", "testsrc2=s=160x90:r=5:d=20",
    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "10",
    partial,
  ]);
  await rename(partial, path);
  return path;
}

export async function generateConversation(spec: ConversationSpec, mediaDir = ".tmp/media"): Promise<Conversation> {
  const work = await mkdtemp(join(tmpdir(), "conversation-"));
  try {
    const voices = new Voices(work);
    const introSeconds = spec.introSeconds ?? 0;
    const intro = introSeconds > 0 ? { start: 0, end: introSeconds } : null;
    const firstSample = Math.round((introSeconds > 0 ? introSeconds + MUSIC_MARGIN_SECONDS : 1) * RATE);
    const timeline = await planConversation(spec, voices, firstSample);
    const lastSound = timeline.end / RATE;
    const outroSeconds = spec.outroSeconds ?? 0;
    const outro = outroSeconds > 0 ? { start: lastSound + MUSIC_MARGIN_SECONDS, end: lastSound + MUSIC_MARGIN_SECONDS + outroSeconds } : null;
    const duration = outro ? outro.end : lastSound + 1;
    const total = Math.round(duration * RATE);
    const raw = join(work, "mix.s16");
    await writeMix(raw, total, timeline, spec, intro, outro);

    const cues = spec.subtitleTrack
      ? timeline.sentences.map((s) => ({ start: s.start, end: s.end, text: s.text }))
      : [];
    const srt = join(work, "track.srt");
    if (spec.subtitleTrack) await writeFile(srt, conversationSrt(cues));
    const picture = await loopPicture(mediaDir);
    await mkdir(dirname(resolve(spec.outPath)), { recursive: true });
    await runTool(process.env.FFMPEG_PATH || "ffmpeg", [
      "-nostdin", "-v", "error", "-y",
      "-stream_loop", "-1", "-i", picture,
      "-f", "s16le", "-ar", String(RATE), "-ac", "1", "-i", raw,
      ...(spec.subtitleTrack ? ["-f", "srt", "-i", srt] : []),
      "-map", "0:v:0", "-map", "1:a:0", ...(spec.subtitleTrack ? ["-map", "2:s:0"] : []),
      "-t", duration.toFixed(3),
      "-c:v", "copy",
      ...(spec.audioCodec === "flac" ? ["-c:a", "flac", "-strict", "-2"] : ["-c:a", "aac", "-b:a", "48k"]),
      ...(spec.subtitleTrack ? ["-c:s", "mov_text", "-metadata:s:s:0", "language=eng"] : []),
      "-movflags", "+faststart",
      spec.outPath,
    ]);
    return {
      path: spec.outPath,
      durationSeconds: duration,
      sentences: timeline.sentences,
      laughs: timeline.laughs,
      highlights: timeline.highlights,
      intro,
      outro,
      cues,
      overlaps: timeline.overlaps,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export async function cachedConversation(spec: Omit<ConversationSpec, "outPath">, dir = ".tmp/media"): Promise<Conversation> {
  const key = createHash("sha256").update(JSON.stringify({ VERSION, spec })).digest("hex").slice(0, 16);
  const path = resolve(join(dir, `conversation-${key}.mp4`));
  if (existsSync(path) && existsSync(`${path}.json`)) return JSON.parse(await readFile(`${path}.json`, "utf8")) as Conversation;
  const partial = partialPath(path);
  const made = await generateConversation({ ...spec, outPath: partial }, dir);
  const conversation = { ...made, path };
  await commitCached(partial, path, conversation);
  return conversation;
}
