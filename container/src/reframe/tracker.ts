/**
 * Faces over time: one track per person per scene, followed from sampled
 * frame to sampled frame, so the camera follows a person rather than
 * whichever box a detector listed first, and a person missed for a while is
 * the same person when found again.
 *
 * Looking at every frame with the whole-frame detector would cost most of a
 * job; instead (see detector.ts for the three looks):
 *
 * - every SCAN_SECONDS the whole frame is scanned for faces (at input 224),
 *   and at each scene's start and every FINE_SECONDS or so, with the
 *   small-face tiles as well: new faces start tracks, known ones are
 *   confirmed; a scan is skipped when nothing in the picture has moved since
 *   the last one (no face can have come in), and something new outside the
 *   faces followed brings the next fine scan forward (MOTION_FINE_SECONDS);
 * - between scans each track is looked for near where it is expected (its
 *   last place moved on at its recent speed) every FOLLOW_SECONDS, unless the
 *   picture where it was has not changed (a still face costs nothing until
 *   the next scan), and at every sampled frame while that picture shows it
 *   moving away (a fast face stays within reach of the next look); frames
 *   nobody needs to look at are not even handed to the detector;
 * - a track not seen for LOST_SECONDS is no longer looked for between scans;
 *   a face a scan finds near where a lost track was, about as big, continues
 *   that track;
 * - a face missed where it was expected brings a fine scan forward to the
 *   next frame, and a face that scan finds away from every track, about as
 *   big as the one missed, continues the missed one (the person jumped: a cut
 *   in the source, or someone moving faster than the looks);
 * - while two or more people are in the picture and someone may be speaking,
 *   the 68-point landmark net measures how open each mouth is.
 *
 * A detection seen only once is not a person (most stray detections are).
 */
import { sameFace, type FaceBox, type FrameLook } from "./detector.ts";

/**
 * Whole-frame scans this often (seconds); the small-face tiles every
 * FINE_SECONDS, and, while they find no face the whole-frame pass could not,
 * twice as long after each (up to LONGEST_FINE_SECONDS).
 */
export const SCAN_SECONDS = 2;
export const FINE_SECONDS = 6;
const LONGEST_FINE_SECONDS = 12;
/**
 * Something new in the picture (a change outside the faces followed since the
 * last fine scan) brings the next fine scan forward to this long after the
 * last: a small face coming in is found within about this long, while
 * motion that is not a face (which changes the picture all the time) costs at
 * most a fine scan this often.
 */
const MOTION_FINE_SECONDS = 4;
/** Faces smaller than this share of the frame's longer side are the tiles' to find. */
const SMALL_FACE = 1 / 8;
/**
 * Mouths are measured this often (seconds) while they are wanted: every other
 * sampled frame. The landmark net is most of a conversation's detection cost,
 * and a shot lasts at least MIN_SHOT_SECONDS (speaker.ts). Where turns shorter
 * than a shot matter (layout auto shows a quick exchange split), every
 * sampled frame (TrackerOptions.everyFrameMouths).
 */
const MOUTH_SECONDS = 0.5;
/** Between scans, a face is looked for this often (seconds; at every measure of the mouths while they are measured). */
const FOLLOW_SECONDS = 0.75;
/** A face missed where it was expected brings a fine scan forward to the next frame, at most this often (seconds). */
const MISSED_FINE_SECONDS = 1;
/** Unseen for this long, a track is lost (only a scan can find it again). */
const LOST_SECONDS = 1.5;
/** However still, a track is looked at again at least this often. */
const RECHECK_SECONDS = 2.5;
/** Mean change of a face's thumbnail (0-255 grey levels) below which it has not moved. */
const STILL_CHANGE = 5;
/**
 * Mean change of a face's thumbnail above which it is moving away from where
 * it was found (a shift of about a third of its size): it is looked for at
 * the next sampled frame rather than FOLLOW_SECONDS later. A face nodding or
 * talking in place changes it by less.
 */
const MOVING_CHANGE = 15;
/** The same for the lips: a mouth opening by a pixel or two changes them by more than this. */
const STILL_MOUTH = 4;
const THUMB = 12;
/**
 * The whole picture's thumbnail (side, in samples: one sample per 20 pixels
 * of a 640-pixel frame, so a face of 1/20 of the width covers at least one),
 * and the change of one sample (grey levels) that means something moved there.
 */
const PICTURE_THUMB = 32;
const MOVED = 24;
const WHOLE: FaceBox = { x: 0, y: 0, width: 1, height: 1, score: 1 };
/** A box within this share of the face's size of the last one, and this much bigger or smaller, has not moved. */
const STEADY_SHIFT = 0.12;
const STEADY_RESIZE = 0.15;
/** A face continues a track if within this many face sizes of where the track was expected. */
const REACH_SIZES = 1.2;
/** ... plus this much of the frame per second since it was last seen (people walk). */
const REACH_PER_SECOND = 0.3;

export interface TrackPoint {
  t: number;
  box: FaceBox;
  /** Found by the detector at t (false: carried over because the picture there had not changed). */
  detected: boolean;
  /** How open the mouth was (inner lips' gap over the face's size), when measured. */
  mouth?: number;
  /** The face jumped here from where it was last seen (the camera cuts rather than pans). */
  jumped?: boolean;
}

export interface Track {
  id: number;
  scene: number;
  points: TrackPoint[];
  /** How much this person matters in the scene: face area x confidence, summed over the frames it was found in. */
  weight: number;
  /** Frames the detector found it in. */
  sightings: number;
  /** Set when it turned out to follow the same face as an older track (it is left out of the result). */
  duplicate?: boolean;
}

/** Index of the scene holding `t`, given ascending scene start times (the first is 0). */
export function sceneOf(sceneStarts: number[], t: number): number {
  let index = 0;
  for (let i = 0; i < sceneStarts.length; i++) if (t >= sceneStarts[i]!) index = i;
  return index;
}

function centre(box: FaceBox): { x: number; y: number } {
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

function size(box: FaceBox): number {
  return Math.max(box.width, box.height);
}

/** A grey thumbnail of a box of an RGB frame (nearest pixels; enough to tell whether anything moved). */
export function thumbnail(rgb: Uint8Array, width: number, height: number, box: FaceBox, side = THUMB): Uint8Array {
  const out = new Uint8Array(side * side);
  for (let j = 0; j < side; j++) {
    const y = Math.min(height - 1, Math.max(0, Math.floor((box.y + (box.height * (j + 0.5)) / side) * height)));
    for (let i = 0; i < side; i++) {
      const x = Math.min(width - 1, Math.max(0, Math.floor((box.x + (box.width * (i + 0.5)) / side) * width)));
      const k = (y * width + x) * 3;
      out[j * side + i] = (rgb[k]! * 77 + rgb[k + 1]! * 150 + rgb[k + 2]! * 29) >> 8;
    }
  }
  return out;
}

/** Whether `next` is the face of `last` moved or resized by no more than the detector's jitter. */
function steady(last: FaceBox, next: FaceBox): boolean {
  const a = centre(last);
  const b = centre(next);
  return Math.hypot(a.x - b.x, a.y - b.y) < STEADY_SHIFT * size(last) && Math.abs(size(next) / size(last) - 1) < STEADY_RESIZE;
}

/** Whether any sample of two picture thumbnails outside the (slightly widened) boxes differs by more than MOVED. */
function movedOutside(a: Uint8Array, b: Uint8Array, boxes: FaceBox[]): boolean {
  for (let j = 0; j < PICTURE_THUMB; j++) {
    const y = (j + 0.5) / PICTURE_THUMB;
    for (let i = 0; i < PICTURE_THUMB; i++) {
      const k = j * PICTURE_THUMB + i;
      if (Math.abs(a[k]! - b[k]!) <= MOVED) continue;
      const x = (i + 0.5) / PICTURE_THUMB;
      const inFace = boxes.some((f) => x >= f.x - f.width * 0.2 && x <= f.x + f.width * 1.2 && y >= f.y - f.height * 0.2 && y <= f.y + f.height * 1.2);
      if (!inFace) return true;
    }
  }
  return false;
}

function change(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

interface Live {
  track: Track;
  /** Thumbnail where the track was last detected, and when. */
  thumb: Uint8Array;
  lastDetected: number;
  /** When it was last detected, or seen unmoved where it was detected. */
  lastSeen: number;
  lastLooked: number;
  /** Set when a look where it was expected missed it (cleared when it is found): a scan may find it anywhere. */
  missed?: number;
  /** The last mouth measured: on which face box, where the lips were, how open, and their thumbnail. */
  mouth?: { face: FaceBox; lips: FaceBox; open: number; thumb: Uint8Array };
}

export interface TrackerOptions {
  sceneStarts: number[];
  /** Whether mouths are worth measuring at `t` (someone may be speaking then). */
  mouthsWanted: (t: number) => boolean;
  /** Measure mouths at every sampled frame, not every MOUTH_SECONDS. */
  everyFrameMouths?: boolean;
}

export class Tracker {
  private readonly tracks: Track[] = [];
  private live: Live[] = [];
  private scene = -1;
  private lastScan = Number.NEGATIVE_INFINITY;
  private lastFine = Number.NEGATIVE_INFINITY;
  private fineEvery = FINE_SECONDS;
  private lastMouths = Number.NEGATIVE_INFINITY;
  /** A followed face was missed where it was expected: a fine scan at the next frame looks for it everywhere. */
  private scanSoon = false;
  /** A small grey picture of the frame at the last scan, and at the last fine scan with the faces followed then. */
  private lastPicture: Uint8Array | undefined;
  private finePicture: { picture: Uint8Array; faces: FaceBox[] } | undefined;
  /** Looks the tracker made, by kind (for logs and the benchmark). */
  readonly counts = { scans: 0, fineScans: 0, stillScans: 0, nearLooks: 0, stillSkips: 0, mouthLooks: 0, mouthSkips: 0 };

  constructor(private readonly options: TrackerOptions) {}

  /** Where a track is expected at `t`: its last detection moved on at its recent speed (at most a second ahead). */
  private expected(track: Track, t: number): FaceBox {
    const seen = track.points.filter((p) => p.detected);
    const last = seen.at(-1) ?? track.points.at(-1)!;
    const before = seen.at(-2);
    if (!before || last.t - before.t > LOST_SECONDS || last.t === before.t) return last.box;
    const dt = Math.min(1, t - last.t);
    const vx = (last.box.x - before.box.x) / (last.t - before.t);
    const vy = (last.box.y - before.box.y) / (last.t - before.t);
    return { ...last.box, x: last.box.x + vx * dt, y: last.box.y + vy * dt };
  }

  /**
   * Adds a sighting. A face that has not moved keeps its box: the detector's
   * boxes of one still face differ by up to a third in size from look to look,
   * and the mouth's landmarks move with the box they are given. `still`: the
   * picture under the last box has not changed since it was found there.
   */
  private add(live: Live, t: number, found: FaceBox, frame: { rgb: Uint8Array; width: number; height: number }, still = false): void {
    const last = [...live.track.points].reverse().find((p) => p.detected)?.box;
    const keep = last !== undefined && (steady(last, found) || (still && sameFace(last, found)));
    const box = keep ? { ...last, score: found.score } : found;
    live.track.points.push({ t, box, detected: true });
    live.track.weight += box.width * box.height * box.score;
    live.track.sightings++;
    live.thumb = thumbnail(frame.rgb, frame.width, frame.height, box);
    live.lastDetected = t;
    live.lastSeen = t;
    delete live.missed;
  }

  /**
   * Takes the sampled frame at `t`. `open` gives the frame to the detector;
   * it is called only if a look is due (most frames between scans need none,
   * or only a thumbnail), and what it opened is disposed of here.
   */
  async step(t: number, frame: { rgb: Uint8Array; width: number; height: number }, open: () => Promise<FrameLook>): Promise<void> {
    let opened: FrameLook | undefined;
    const look = async (): Promise<FrameLook> => (opened ??= await open());
    try {
      await this.track(t, frame, look);
    } finally {
      opened?.dispose();
    }
  }

  private async track(t: number, frame: { rgb: Uint8Array; width: number; height: number }, look: () => Promise<FrameLook>): Promise<void> {
    const scene = sceneOf(this.options.sceneStarts, t);
    if (scene !== this.scene) {
      this.scene = scene;
      this.live = [];
      this.lastScan = Number.NEGATIVE_INFINITY;
      this.lastFine = Number.NEGATIVE_INFINITY;
      this.fineEvery = FINE_SECONDS;
      this.lastPicture = undefined;
      this.finePicture = undefined;
    }
    const found = new Set<Live>();
    const picture = thumbnail(frame.rgb, frame.width, frame.height, WHOLE, PICTURE_THUMB);
    const known = this.live.filter((l) => t - l.lastSeen <= LOST_SECONDS).map((l) => l.track.points.at(-1)!.box);
    const soon = this.scanSoon;
    this.scanSoon = false;
    if (soon) {
      // A face missed where it was expected (it jumped, or outran the looks): the whole frame, small faces too.
      this.lastScan = t;
      await this.scan(t, scene, true, picture, frame, found, look);
    } else if (t - this.lastScan >= SCAN_SECONDS - 1e-6) {
      const since = t - this.lastFine;
      // What moved outside the faces followed: since the last scan; and since the last fine scan, outside the faces it found too.
      const movedSinceScan = this.lastPicture === undefined || movedOutside(picture, this.lastPicture, known);
      const newSinceFine = this.finePicture === undefined || movedOutside(picture, this.finePicture.picture, [...known, ...this.finePicture.faces]);
      const fine = since >= this.fineEvery - 1e-6 || (since >= MOTION_FINE_SECONDS - 1e-6 && newSinceFine);
      this.lastScan = t;
      if (!movedSinceScan && (!fine || !newSinceFine)) {
        // Nothing moved in the picture but the faces already followed: no face can have come in.
        this.counts.stillScans++;
      } else {
        await this.scan(t, scene, fine, picture, frame, found, look);
      }
    }
    const mouthsDue = this.options.everyFrameMouths === true || t - this.lastMouths >= MOUTH_SECONDS - 1e-6;
    const mouths = this.live.length >= 2 && mouthsDue && this.options.mouthsWanted(t);
    if (mouths) this.lastMouths = t;
    for (const live of this.live) {
      if (found.has(live) || t - live.lastSeen > LOST_SECONDS) continue;
      // Between scans a face is looked for every FOLLOW_SECONDS (the camera glides between sightings),
      // or at every measure of the mouths, or at once when the picture where it was shows it moving away
      // (followed a frame at a time it stays within reach of the next look, however fast it goes).
      const last = live.track.points.at(-1)!;
      const changed = change(thumbnail(frame.rgb, frame.width, frame.height, last.box), live.thumb);
      if (!mouths && t - live.lastLooked < FOLLOW_SECONDS - 1e-6 && changed < MOVING_CHANGE) continue;
      const still = changed < STILL_CHANGE;
      if (still && t - live.lastLooked < RECHECK_SECONDS) {
        live.track.points.push({ t, box: last.box, detected: false });
        live.lastSeen = t;
        this.counts.stillSkips++;
        found.add(live);
        continue;
      }
      this.counts.nearLooks++;
      const expected = this.expected(live.track, t);
      let face = await (await look()).near(expected);
      if (!face) {
        // It moved further than expected, or the look missed it: a wider look, and until it is found, a look every frame.
        this.counts.nearLooks++;
        face = await (await look()).near(expected, true);
      }
      if (face) {
        live.lastLooked = t;
        this.add(live, t, face, frame, still);
        found.add(live);
      } else if (live.missed === undefined) {
        live.missed = t;
        if (t - this.lastFine >= MISSED_FINE_SECONDS - 1e-6) this.scanSoon = true;
      }
    }
    // Two tracks on one face (found at two sizes, or one drifted onto the other): the older one stays.
    for (const a of this.live) {
      for (const b of this.live) {
        if (a === b || a.track.duplicate || b.track.duplicate || b.track.id < a.track.id) continue;
        const pa = a.track.points.at(-1)!;
        const pb = b.track.points.at(-1)!;
        if (pa.t === t && pb.t === t && sameFace(pa.box, pb.box)) b.track.duplicate = true;
      }
    }
    this.live = this.live.filter((l) => !l.track.duplicate);
    const present = [...found].filter((l) => !l.track.duplicate && l.track.points.at(-1)!.t === t);
    if (present.length >= 2 && mouths) {
      // A mouth whose pixels have not changed since it was measured (in a face that has not moved) is as open as it was.
      const measure = present.filter((l) => {
        const box = l.track.points.at(-1)!.box;
        const known = l.mouth;
        const same = known !== undefined && known.face === box && change(thumbnail(frame.rgb, frame.width, frame.height, known.lips), known.thumb) < STILL_MOUTH;
        if (same) {
          l.track.points.at(-1)!.mouth = known.open;
          this.counts.mouthSkips++;
        }
        return !same;
      });
      if (measure.length > 0) {
        this.counts.mouthLooks += measure.length;
        const found = await (await look()).mouths(measure.map((l) => l.track.points.at(-1)!.box));
        measure.forEach((l, i) => {
          const { open, lips } = found[i]!;
          l.track.points.at(-1)!.mouth = open;
          l.mouth = { face: l.track.points.at(-1)!.box, lips, open, thumb: thumbnail(frame.rgb, frame.width, frame.height, lips) };
        });
      }
    }
  }

  /** A scan of the whole frame (`fine`: with the small-face tiles): new faces start tracks, known ones are confirmed. */
  private async scan(t: number, scene: number, fine: boolean, picture: Uint8Array, frame: { rgb: Uint8Array; width: number; height: number }, found: Set<Live>, look: () => Promise<FrameLook>): Promise<void> {
    this.lastPicture = picture;
    this.counts.scans++;
    const faces = await (await look()).scan(fine);
    if (fine) {
      this.lastFine = t;
      this.counts.fineScans++;
      this.finePicture = { picture, faces };
      const long = Math.max(frame.width, frame.height);
      const small = faces.some((f) => Math.max(f.width * frame.width, f.height * frame.height) < SMALL_FACE * long);
      this.fineEvery = small ? FINE_SECONDS : Math.min(LONGEST_FINE_SECONDS, this.fineEvery * 2);
    }
    // Larger faces pick first: they are the surer detections.
    for (const face of [...faces].sort((a, b) => size(b) - size(a))) {
      let best: Live | undefined;
      let bestDistance = Number.POSITIVE_INFINITY;
      for (const live of this.live) {
        if (found.has(live)) continue;
        const wanted = this.expected(live.track, t);
        const c = centre(face);
        const e = centre(wanted);
        const distance = Math.hypot(c.x - e.x, c.y - e.y);
        const reach = REACH_SIZES * Math.max(size(face), size(wanted)) + REACH_PER_SECOND * (t - live.lastDetected);
        const ratio = size(face) / size(wanted);
        if (distance <= reach && ratio > 0.5 && ratio < 2 && distance < bestDistance) {
          best = live;
          bestDistance = distance;
        }
      }
      if (!best) {
        // A face missed where it was expected, about as big as this one: it jumped here (the nearest in size of those missed).
        let closest = Number.POSITIVE_INFINITY;
        for (const live of this.live) {
          if (found.has(live) || live.missed === undefined) continue;
          const ratio = size(face) / size(live.track.points.at(-1)!.box);
          if (ratio > 0.6 && ratio < 1.6 && Math.abs(Math.log(ratio)) < closest) {
            best = live;
            closest = Math.abs(Math.log(ratio));
          }
        }
      }
      if (!best) {
        // A new face is looked for again at the next frame: two sightings give its speed.
        best = { track: { id: this.tracks.length, scene, points: [], weight: 0, sightings: 0 }, thumb: new Uint8Array(0), lastDetected: t, lastSeen: t, lastLooked: Number.NEGATIVE_INFINITY };
        this.tracks.push(best.track);
        this.live.push(best);
      }
      // A missed face found away from where it was: it is known to have left by the look that missed it.
      if (best.missed !== undefined && best.track.points.at(-1)!.t < best.missed) best.track.points.push({ t: best.missed, box: face, detected: false, jumped: true });
      const held = best.track.points.at(-1)?.box;
      const still = held !== undefined && change(thumbnail(frame.rgb, frame.width, frame.height, held), best.thumb) < STILL_CHANGE;
      this.add(best, t, face, frame, still);
      if (best.track.sightings > 1) best.lastLooked = t;
      found.add(best);
    }
  }

  /** All tracks but duplicates, people and stray detections alike, in the order they started. */
  result(): Track[] {
    return this.tracks.filter((t) => !t.duplicate);
  }
}

/** A track found in a single frame only is more likely a false detection than a person. */
export function isPerson(track: Track, samplesInScene: number): boolean {
  return track.sightings >= Math.min(2, samplesInScene);
}

/**
 * The clip's face count: the most people present together at one sampled
 * time, in at least two sampled times (one odd frame does not add a person).
 * A person is present between two of their points less than LOST_SECONDS
 * apart (a face is looked at only every so often between scans).
 */
export function facesCount(persons: Track[]): number {
  const times = [...new Set(persons.flatMap((track) => track.points.map((p) => p.t)))];
  const counts = times
    .map((t) =>
      persons.filter((track) => {
        const after = track.points.find((p) => p.t >= t);
        const before = [...track.points].reverse().find((p) => p.t <= t);
        return before !== undefined && after !== undefined && after.t - before.t <= LOST_SECONDS;
      }).length,
    )
    .sort((a, b) => b - a);
  if (counts.length === 0) return 0;
  return counts.length === 1 ? counts[0]! : counts[1]!;
}
