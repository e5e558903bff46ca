/**
 * Background beds for the speech test sources (test/media/speech.ts), as
 * float samples in [-1, 1] at a given rate, deterministic per seed. Each is
 * made to sound like what hides speech from a loudness-based analysis:
 *
 *   music     sustained chords (C, A minor, F, G, two seconds each) of
 *             harmonic tones plus a bass note, pulsing on eighth notes at
 *             120 bpm; harmonic and continuous, the hardest case for a
 *             detector that listens for voiced sound.
 *   beat      a steady 120 bpm kick (a falling sine) with a hi-hat (a short
 *             noise tick) on the off-beats.
 *   applause  bursts (2-4 s, every 6-10 s) of dense random claps: short
 *             decaying noise bursts, band-limited to where hands clap.
 *   pink      steady pink noise, like a room's air conditioning.
 *
 * Levels are raw here; speech.ts scales each bed against the voice.
 */
export type BedKind = "music" | "beat" | "applause" | "pink";

/** A small deterministic PRNG (mulberry32): the same seed gives the same bed on every machine. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CHORDS = [
  [261.63, 329.63, 392.0, 130.81], // C
  [220.0, 261.63, 329.63, 110.0], // A minor
  [174.61, 220.0, 261.63, 87.31], // F
  [196.0, 246.94, 293.66, 98.0], // G
];

function music(samples: number, rate: number): Float32Array {
  const out = new Float32Array(samples);
  const eighth = 0.25;
  for (let i = 0; i < samples; i++) {
    const t = i / rate;
    const chord = CHORDS[Math.floor(t / 2) % CHORDS.length]!;
    const sinceNote = t % eighth;
    const pulse = 0.55 + 0.45 * Math.exp(-sinceNote * 12);
    let v = 0;
    for (const [n, f] of chord.entries()) {
      const gain = n === 3 ? 0.5 : 0.3;
      // Fundamental plus two softer harmonics: an organ-like timbre.
      v += gain * (Math.sin(2 * Math.PI * f * t) + 0.4 * Math.sin(4 * Math.PI * f * t) + 0.2 * Math.sin(6 * Math.PI * f * t));
    }
    out[i] = v * pulse;
  }
  return out;
}

function beat(samples: number, rate: number, random: () => number): Float32Array {
  const out = new Float32Array(samples);
  const period = 0.5;
  for (let i = 0; i < samples; i++) {
    const t = i / rate;
    const sinceKick = t % period;
    // A kick: a sine falling from 150 Hz to 50 Hz, decaying over about 150 ms.
    const phase = 2 * Math.PI * (50 * sinceKick + (100 / 25) * (1 - Math.exp(-25 * sinceKick)));
    let v = Math.sin(phase) * Math.exp(-sinceKick * 18);
    const sinceHat = (t + period / 2) % period;
    if (sinceHat < 0.03) v += 0.35 * (random() * 2 - 1) * Math.exp(-sinceHat * 150);
    out[i] = v;
  }
  return out;
}

/** One-pole high-pass then low-pass: keeps roughly 800 Hz - 5 kHz, where claps sit. */
function bandLimit(x: Float32Array, rate: number): void {
  const hp = Math.exp((-2 * Math.PI * 800) / rate);
  const lp = 1 - Math.exp((-2 * Math.PI * 5000) / rate);
  let prevIn = 0;
  let prevHp = 0;
  let low = 0;
  for (let i = 0; i < x.length; i++) {
    const high = hp * (prevHp + x[i]! - prevIn);
    prevIn = x[i]!;
    prevHp = high;
    low += lp * (high - low);
    x[i] = low;
  }
}

/** Applause bursts as intervals (seconds): 2-4 s long, starting every 6-10 s. */
export function applauseBursts(duration: number, seed: number): { start: number; end: number }[] {
  const random = rng(seed ^ 0xa11);
  const bursts: { start: number; end: number }[] = [];
  for (let t = 1 + random() * 3; t < duration; t += 6 + random() * 4) {
    bursts.push({ start: t, end: Math.min(duration, t + 2 + random() * 2) });
  }
  return bursts;
}

function applause(samples: number, rate: number, random: () => number, seed: number): Float32Array {
  const out = new Float32Array(samples);
  const clapLength = Math.round(0.012 * rate);
  for (const burst of applauseBursts(samples / rate, seed)) {
    // About 40 claps a second from a small crowd, each a decaying noise tick.
    const claps = Math.round((burst.end - burst.start) * 40);
    for (let c = 0; c < claps; c++) {
      const at = Math.floor((burst.start + random() * (burst.end - burst.start)) * rate);
      const gain = 0.4 + random() * 0.6;
      for (let j = 0; j < clapLength && at + j < samples; j++) {
        out[at + j]! += gain * (random() * 2 - 1) * Math.exp(-j / (clapLength / 4));
      }
    }
  }
  bandLimit(out, rate);
  return out;
}

/** Pink noise by Paul Kellet's economical filter over white noise. */
function pink(samples: number, random: () => number): Float32Array {
  const out = new Float32Array(samples);
  let b0 = 0, b1 = 0, b2 = 0, b3 = 0, b4 = 0, b5 = 0, b6 = 0;
  for (let i = 0; i < samples; i++) {
    const white = random() * 2 - 1;
    b0 = 0.99886 * b0 + white * 0.0555179;
    b1 = 0.99332 * b1 + white * 0.0750759;
    b2 = 0.969 * b2 + white * 0.153852;
    b3 = 0.8665 * b3 + white * 0.3104856;
    b4 = 0.55 * b4 + white * 0.5329522;
    b5 = -0.7616 * b5 - white * 0.016898;
    out[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + white * 0.5362;
    b6 = white * 0.115926;
  }
  return out;
}

/** `seconds` of the bed at `rate` Hz. */
export function makeBed(kind: BedKind, seconds: number, rate: number, seed: number): Float32Array {
  const samples = Math.round(seconds * rate);
  const random = rng(seed);
  switch (kind) {
    case "music":
      return music(samples, rate);
    case "beat":
      return beat(samples, rate, random);
    case "applause":
      return applause(samples, rate, random, seed);
    case "pink":
      return pink(samples, random);
  }
}
