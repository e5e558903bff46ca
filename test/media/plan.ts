/**
 * Planning half of the test-media generator: turns a MediaSpec into the exact
 * structure that will be planted (phrases, pauses, bursts, scenes, subject
 * positions). Pure and deterministic (seeded), so tests can compare what the
 * engine found against what was planted without reading the media back.
 */

export type AudioKind = "speech" | "silence" | "none";

export interface MediaSpec {
  durationSeconds: number;
  /** Default 320x180 at 15 fps: small and fast for tests. */
  width?: number;
  height?: number;
  fps?: number;
  /** "speech": phrases and pauses; "silence": a silent track; "none": no audio stream. Default "speech". */
  audio?: AudioKind;
  /** Range of phrase lengths in seconds (default [3, 7]). */
  phraseSeconds?: [number, number];
  /** Range of pause lengths in seconds (default [0.8, 1.6]); pauses are digital silence. */
  pauseSeconds?: [number, number];
  /** Start times of loud bursts (noise near full scale, with a motion burst on screen). */
  bursts?: number[];
  /** Length of each burst (default 1.5 s). */
  burstSeconds?: number;
  /** Times of scene changes (rounded to frame boundaries in the facts). */
  sceneChanges?: number[];
  /** A bright square off-centre that drifts slowly (default true). */
  subject?: boolean;
  /** Fixed keyframe interval of the encode (default 2 s, like streaming encodes). */
  keyframeIntervalSeconds?: number;
  /** Also force keyframes at scene changes, as x264's scenecut would (default true). */
  keyframesAtSceneChanges?: boolean;
  /** Temporal noise strength (0-40, default 0): makes decode and encode cost closer to camera footage. */
  grain?: number;
  /** Amplitude of the room-noise floor under everything (default 0.0015, about -60 dBFS); raise it for a noisy room. */
  noiseFloor?: number;
  /** Caps the video bitrate (with grain, keeps the file near a real encode's size). */
  maxBitrateKbps?: number;
  seed?: number;
}

export interface Interval {
  start: number;
  end: number;
}

export interface Phrase extends Interval {
  /** Linear gain of the phrase (emphasised phrases are louder). */
  gain: number;
}

export interface Scene extends Interval {
  /** Background colour as 0xRRGGBB. */
  color: string;
  /** Mean centre of the bright subject as a fraction of width/height, or null without a subject. */
  subject: { centerX: number; centerY: number } | null;
}

export interface MediaFacts {
  durationSeconds: number;
  width: number;
  height: number;
  fps: number;
  audio: AudioKind;
  phrases: Phrase[];
  /** Silences between phrases (and before the first / after the last); a burst planted over one fills it. */
  pauses: Interval[];
  bursts: Interval[];
  sceneChanges: number[];
  scenes: Scene[];
  /** Subject square's side in pixels (0 without a subject). */
  subjectSize: number;
  keyframeIntervalSeconds: number;
  keyframesAtSceneChanges: boolean;
  grain: number;
  maxBitrateKbps: number | null;
  /** Only present when the spec set it (so older cached sources keep their keys). */
  noiseFloor?: number;
}

/** Colours alternate dark and light so consecutive scenes differ strongly in luma and hue. */
const SCENE_COLORS = ["0x1a2a6c", "0xf0a030", "0x106050", "0xe060c0", "0x303030", "0x60c0f0", "0x702010", "0xc0e060"];
const SUBJECT_X = [0.22, 0.78, 0.3, 0.7, 0.2, 0.8];
const SUBJECT_Y = [0.4, 0.6, 0.5];

/** Small deterministic PRNG (mulberry32), so a spec always plants the same structure. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function planPhrases(duration: number, spec: MediaSpec, random: () => number): { phrases: Phrase[]; pauses: Interval[] } {
  const [phraseMin, phraseMax] = spec.phraseSeconds ?? [3, 7];
  const [pauseMin, pauseMax] = spec.pauseSeconds ?? [0.8, 1.6];
  const phrases: Phrase[] = [];
  const pauses: Interval[] = [];
  let cursor = 0;
  const leadIn = round3(pauseMin + random() * (pauseMax - pauseMin));
  pauses.push({ start: 0, end: leadIn });
  cursor = leadIn;
  while (cursor < duration) {
    const length = phraseMin + random() * (phraseMax - phraseMin);
    const end = round3(Math.min(cursor + length, duration));
    // Roughly one phrase in four is emphasised (louder), as a speaker stressing a point.
    const gain = random() < 0.25 ? 0.7 : 0.3;
    if (end - cursor >= 0.5) phrases.push({ start: cursor, end, gain });
    const pause = pauseMin + random() * (pauseMax - pauseMin);
    const pauseEnd = round3(Math.min(end + pause, duration));
    if (pauseEnd > end) pauses.push({ start: end, end: pauseEnd });
    cursor = pauseEnd;
  }
  return { phrases, pauses };
}

export function planMedia(spec: MediaSpec): MediaFacts {
  const fps = spec.fps ?? 15;
  const width = spec.width ?? 320;
  const height = spec.height ?? 180;
  const durationSeconds = Math.round(spec.durationSeconds * fps) / fps;
  const random = seededRandom(spec.seed ?? 1);
  const audio = spec.audio ?? "speech";

  const speech = audio === "speech" ? planPhrases(durationSeconds, spec, random) : { phrases: [], pauses: [] };
  const burstSeconds = spec.burstSeconds ?? 1.5;
  // Bursts are loud noise in the audio (when there is audio) and a shake of the subject on screen.
  const bursts = (spec.bursts ?? []).map((start) => ({ start, end: round3(Math.min(start + burstSeconds, durationSeconds)) }));

  const sceneChanges = [...new Set((spec.sceneChanges ?? []).map((t) => Math.round(t * fps) / fps))]
    .filter((t) => t > 0 && t < durationSeconds)
    .sort((a, b) => a - b);
  const bounds = [0, ...sceneChanges, durationSeconds];
  const withSubject = spec.subject ?? true;
  const scenes: Scene[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    scenes.push({
      start: bounds[i] ?? 0,
      end: bounds[i + 1] ?? durationSeconds,
      color: SCENE_COLORS[i % SCENE_COLORS.length] ?? "0x000000",
      subject: withSubject
        ? { centerX: SUBJECT_X[i % SUBJECT_X.length] ?? 0.25, centerY: SUBJECT_Y[i % SUBJECT_Y.length] ?? 0.5 }
        : null,
    });
  }
  return {
    durationSeconds,
    width,
    height,
    fps,
    audio,
    phrases: speech.phrases,
    pauses: speech.pauses,
    bursts,
    sceneChanges,
    scenes,
    subjectSize: withSubject ? Math.max(8, Math.round(height / 6 / 2) * 2) : 0,
    keyframeIntervalSeconds: spec.keyframeIntervalSeconds ?? 2,
    keyframesAtSceneChanges: spec.keyframesAtSceneChanges ?? true,
    grain: spec.grain ?? 0,
    maxBitrateKbps: spec.maxBitrateKbps ?? null,
    ...(spec.noiseFloor !== undefined ? { noiseFloor: spec.noiseFloor } : {}),
  };
}
