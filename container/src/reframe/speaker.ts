/**
 * Who is speaking, from mouths that move while a voice is heard.
 *
 * The tracker measures, for each person in the picture, how open the mouth
 * is (landmarks) a few times a second while someone may be speaking. Here:
 *
 * 1. A mouth's activity is how far it is open beyond its own closed state
 *    (its 15th percentile over the scene) plus how much it changed since the
 *    last measure: a talking mouth opens and closes, a still one does neither,
 *    and a face that happens to hold its mouth open is not talking.
 * 2. Agreement with the voice: activity while no voice is heard (a smile, a
 *    chew) is that face's own noise, and is taken off its activity. Only
 *    moments well away from any voice count: a speaker's lips part before
 *    the sound and close after it.
 * 3. The speaker at each voiced moment is chosen over the whole scene at once
 *    (Viterbi: the sum of the speakers' activities, minus a cost per switch),
 *    so one odd measure does not switch the camera, but a new turn does.
 * 4. A switch is placed where the new speaker's voice starts (the start of
 *    the speech span the switch falls in or just after), not at the sample.
 * 5. No shot is shorter than MIN_SHOT_SECONDS: a shorter one is given to the
 *    neighbour whose speaker was more active over it. With `layout: auto`,
 *    a stretch of three or more turns each shorter than that (two people
 *    speaking in quick exchange) is shown split instead.
 */
import type { Span } from "./path.ts";

/** The shortest shot between two switches of speaker, seconds. */
export const MIN_SHOT_SECONDS = 2;
/** Activity is averaged over this long about each moment, seconds. */
const WINDOW_SECONDS = 0.6;
/** The cost of a switch of shot, in moments of a typical speaker's activity. */
const SWITCH_COST = 1;
/** ... and of a switch of turn, when looking for quick exchanges (layout auto). */
const TURN_SWITCH_COST = 0.3;
/**
 * A mouth's noise is measured this far from any voice, seconds: a speaker's
 * mouth opens before the sound starts and closes after it stops, and the
 * voice's detected edges are a few hundredths off, so the moments beside a
 * span are the speaker's own turn, not their noise.
 */
const QUIET_MARGIN_SECONDS = 0.5;
/** How far (in a typical speaker's activity) the new speaker leads the old where a switch is placed. */
const LEAD = 0.25;
/** A switch snaps to a speech span's start this close before (seconds) or after it. */
const SNAP_SECONDS = 0.8;

/** A person's mouth over a scene: how open it was at the times it was measured. */
export interface MouthSeries {
  id: number;
  times: number[];
  open: number[];
}

/** A stretch of the scene framed on one person (`speaker`: a MouthSeries id), or on two (`both`). */
export interface SpeakerShot {
  from: number;
  to: number;
  speaker: number;
  /** Split: the two people speaking in turn faster than a shot can follow (layout auto only). */
  both?: [number, number];
}

function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * (sorted.length - 1))))]!;
}

function inSpans(spans: Span[], t: number): boolean {
  return spans.some((s) => t >= s.from && t < s.to);
}

/** Whether `t` is within `margin` seconds of a span (or in it). */
function nearSpans(spans: Span[], t: number, margin: number): boolean {
  return spans.some((s) => t >= s.from - margin && t < s.to + margin);
}

/** Activity per measured time: opening beyond the closed state, plus change since the previous measure. */
function activity(series: MouthSeries): Map<number, number> {
  const closed = quantile(series.open, 0.15);
  const out = new Map<number, number>();
  series.times.forEach((t, i) => {
    const open = series.open[i]!;
    const previous = i > 0 && t - series.times[i - 1]! <= 0.6 ? series.open[i - 1]! : open;
    out.set(t, Math.max(0, open - closed) + Math.abs(open - previous));
  });
  return out;
}

/**
 * The speaker over [from, to) of one scene, as shots (ascending, covering the
 * whole span), or null when the mouths say nothing (no voice, fewer than two
 * people measured, or no mouth moving with the voice).
 */
export function speakerShots(args: { people: MouthSeries[]; speech: Span[]; from: number; to: number; splitWhenBoth: boolean }): SpeakerShot[] | null {
  const { speech, from, to } = args;
  const people = args.people.filter((p) => p.times.length > 0);
  if (people.length < 2) return null;
  const acts = people.map(activity);
  // Agreement with the voice: what a mouth does while nobody is heard is its own noise.
  const noise = people.map((p, k) => {
    const quiet = p.times.filter((t) => !nearSpans(speech, t, QUIET_MARGIN_SECONDS)).map((t) => acts[k]!.get(t)!);
    return quiet.length > 0 ? quiet.reduce((a, b) => a + b, 0) / quiet.length : 0;
  });
  const times = [...new Set(people.flatMap((p) => p.times))].filter((t) => t >= from && t < to && inSpans(speech, t)).sort((a, b) => a - b);
  if (times.length === 0) return null;
  const score = times.map((t) =>
    people.map((p, k) => {
      let sum = 0;
      let n = 0;
      for (const u of p.times) {
        if (Math.abs(u - t) > WINDOW_SECONDS / 2 + 1e-6 || !inSpans(speech, u)) continue;
        sum += acts[k]!.get(u)! - noise[k]!;
        n++;
      }
      return n > 0 ? sum / n : 0;
    }),
  );
  const typical = quantile(score.map((s) => Math.max(...s)), 0.75);
  if (!(typical > 1e-4)) return null;
  const normalised = score.map((row) => row.map((v) => v / typical));
  const starts = speech.map((s) => s.from);
  const runs = (cost: number) => toShots(viterbi(normalised, cost), normalised, times, from, to, starts).map((s) => ({ ...s, speaker: people[s.speaker]!.id }));
  const strength = (shot: SpeakerShot, id: number): number => {
    const k = people.findIndex((p) => p.id === id);
    let sum = 0;
    times.forEach((t, i) => {
      if (t >= shot.from && t < shot.to) sum += normalised[i]![k]!;
    });
    return sum;
  };
  const shots = mergeShortShots(runs(SWITCH_COST), strength);
  return args.splitWhenBoth ? withExchanges(shots, runs(TURN_SWITCH_COST)) : shots;
}

/**
 * The most likely speaker at each moment (Viterbi): the sum of the chosen
 * speakers' activities, minus `cost` per switch. Returns an index per moment.
 */
function viterbi(score: number[][], cost: number): number[] {
  const n = score[0]!.length;
  let best = [...score[0]!];
  const back: number[][] = [];
  for (let i = 1; i < score.length; i++) {
    const previous = best;
    const from = previous.map((stay, k) => {
      let arg = k;
      let value = stay;
      for (let j = 0; j < n; j++) {
        if (j !== k && previous[j]! - cost > value) {
          arg = j;
          value = previous[j]! - cost;
        }
      }
      return arg;
    });
    back.push(from);
    best = previous.map((_, k) => previous[from[k]!]! - (from[k] === k ? 0 : cost) + score[i]![k]!);
  }
  const label = new Array<number>(score.length);
  label[score.length - 1] = best.indexOf(Math.max(...best));
  for (let i = score.length - 1; i > 0; i--) label[i - 1] = back[i - 1]![label[i]!]!;
  return label;
}

/**
 * Runs of one label as shots over [from, to); a switch goes where the new
 * speaker's voice starts. The path may change label a moment or two before
 * the new speaker is seen talking (where neither mouth moves, staying and
 * switching cost the same), so the cut is placed from the first moment of
 * the new run at which the new speaker leads the old one by LEAD.
 */
function toShots(label: number[], score: number[][], times: number[], from: number, to: number, spanStarts: number[]): SpeakerShot[] {
  const shots: SpeakerShot[] = [];
  let runStart = from;
  for (let i = 1; i <= times.length; i++) {
    if (i < times.length && label[i] === label[i - 1]) continue;
    let end = to;
    if (i < times.length) {
      const [old, next] = [label[i - 1]!, label[i]!];
      let seen = i;
      while (seen < times.length && label[seen] === next && !(score[seen]![next]! - score[seen]![old]! > LEAD)) seen++;
      if (seen >= times.length || label[seen] !== next) seen = i;
      end = switchTime(times[seen - 1]!, times[seen]!, spanStarts);
    }
    shots.push({ from: runStart, to: end, speaker: label[i - 1]! });
    runStart = end;
  }
  return shots;
}

/** Where the camera cuts between a sample of the old speaker (a) and one of the new (b). */
function switchTime(a: number, b: number, spanStarts: number[]): number {
  const near = spanStarts.filter((s) => s > a - SNAP_SECONDS && s <= b + SNAP_SECONDS / 2);
  if (near.length === 0) return (a + b) / 2;
  // The span start closest to the first moment the new speaker was seen talking.
  return near.reduce((x, y) => (Math.abs(y - b) < Math.abs(x - b) ? y : x));
}

/** Gives each shot shorter than MIN_SHOT_SECONDS to the neighbour whose speaker did more over it. */
export function mergeShortShots(shots: SpeakerShot[], strength: (shot: SpeakerShot, speaker: number) => number): SpeakerShot[] {
  const out = shots.map((s) => ({ ...s }));
  for (;;) {
    let shortest = -1;
    for (let i = 0; i < out.length; i++) if (out[i]!.to - out[i]!.from < MIN_SHOT_SECONDS - 1e-6 && (shortest < 0 || out[i]!.to - out[i]!.from < out[shortest]!.to - out[shortest]!.from)) shortest = i;
    if (shortest < 0 || out.length === 1) break;
    const shot = out[shortest]!;
    const before = out[shortest - 1];
    const after = out[shortest + 1];
    const into = !after || (before && strength(shot, before.speaker) >= strength(shot, after.speaker)) ? before! : after;
    into.from = Math.min(into.from, shot.from);
    into.to = Math.max(into.to, shot.to);
    out.splice(shortest, 1);
    // Neighbours of one speaker become one shot.
    for (let i = out.length - 1; i > 0; i--) {
      if (out[i]!.speaker === out[i - 1]!.speaker) {
        out[i - 1]!.to = out[i]!.to;
        out.splice(i, 1);
      }
    }
  }
  return out;
}

/**
 * layout auto: where the turns themselves (segmented with a low switch cost)
 * come faster than MIN_SHOT_SECONDS, three or more in a row between two
 * people, both are shown split for that stretch; the rest keeps `shots`.
 * A neighbouring shot left shorter than MIN_SHOT_SECONDS joins the split.
 */
function withExchanges(shots: SpeakerShot[], turns: SpeakerShot[]): SpeakerShot[] {
  const exchanges: SpeakerShot[] = [];
  for (let i = 0; i < turns.length; ) {
    let j = i;
    while (j < turns.length && turns[j]!.to - turns[j]!.from < MIN_SHOT_SECONDS) j++;
    if (j - i >= 3) {
      const seconds = new Map<number, number>();
      for (const turn of turns.slice(i, j)) seconds.set(turn.speaker, (seconds.get(turn.speaker) ?? 0) + turn.to - turn.from);
      const [a, b] = [...seconds.entries()].sort((x, y) => y[1] - x[1]).map(([id]) => id);
      if (a !== undefined && b !== undefined) exchanges.push({ from: turns[i]!.from, to: turns[j - 1]!.to, speaker: a, both: [a, b] });
    }
    i = Math.max(j, i + 1);
  }
  if (exchanges.length === 0) return shots;
  const out: SpeakerShot[] = [];
  for (const shot of shots) {
    // The parts of this shot outside every exchange.
    let pieces = [{ ...shot }];
    for (const x of exchanges) {
      pieces = pieces.flatMap((p) => {
        if (p.to <= x.from || p.from >= x.to) return [p];
        const kept: SpeakerShot[] = [];
        if (p.from < x.from) kept.push({ ...p, to: x.from });
        if (p.to > x.to) kept.push({ ...p, from: x.to });
        return kept;
      });
    }
    out.push(...pieces);
  }
  out.push(...exchanges.map((x) => ({ ...x })));
  out.sort((a, b) => a.from - b.from);
  // Slivers left beside an exchange go to it; an exchange shorter than a shot takes from its neighbours.
  for (let i = 0; i < out.length; i++) {
    const shot = out[i]!;
    if (shot.both || shot.to - shot.from >= MIN_SHOT_SECONDS) continue;
    const before = out[i - 1];
    const after = out[i + 1];
    const into = before?.both ? before : after?.both ? after : undefined;
    if (!into) continue;
    into.from = Math.min(into.from, shot.from);
    into.to = Math.max(into.to, shot.to);
    out.splice(i, 1);
    i--;
  }
  for (let i = out.length - 1; i > 0; i--) {
    const a = out[i - 1]!;
    const b = out[i]!;
    if (a.speaker === b.speaker && String(a.both) === String(b.both)) {
      a.to = b.to;
      out.splice(i, 1);
    }
  }
  return out;
}
