/**
 * Faces over time: detections in consecutive sampled frames are linked into
 * tracks (one per person per scene) by nearest centre, so the camera follows
 * a person rather than whichever box the detector listed first, and a person
 * missed in a frame or two is the same person when found again.
 */
import type { FaceBox } from "./detector.ts";

export interface FaceSample {
  /** Seconds from the clip's first frame. */
  t: number;
  faces: FaceBox[];
}

export interface TrackPoint {
  t: number;
  box: FaceBox;
}

export interface Track {
  scene: number;
  points: TrackPoint[];
  /** How much this person matters in the scene: face area x confidence, summed over the frames it was seen. */
  weight: number;
}

/** A track not seen for longer than this is closed; a face found later starts a new one. */
const TRACK_GAP_SECONDS = 2;

function centre(box: FaceBox): { x: number; y: number } {
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Index of the scene holding `t`, given ascending scene start times (the first is 0). */
export function sceneOf(sceneStarts: number[], t: number): number {
  let index = 0;
  for (let i = 0; i < sceneStarts.length; i++) if (t >= sceneStarts[i]!) index = i;
  return index;
}

export function buildTracks(samples: FaceSample[], sceneStarts: number[]): Track[] {
  const tracks: Track[] = [];
  for (const sample of samples) {
    const scene = sceneOf(sceneStarts, sample.t);
    const open = tracks.filter((tr) => tr.scene === scene && sample.t - tr.points.at(-1)!.t <= TRACK_GAP_SECONDS);
    const taken = new Set<Track>();
    // Larger faces pick first: they are the surer detections.
    const faces = [...sample.faces].sort((a, b) => b.width * b.height - a.width * a.height);
    for (const face of faces) {
      const c = centre(face);
      let best: Track | undefined;
      let bestDistance = Number.POSITIVE_INFINITY;
      for (const track of open) {
        if (taken.has(track)) continue;
        const last = track.points.at(-1)!;
        const lc = centre(last.box);
        const distance = Math.hypot(c.x - lc.x, c.y - lc.y);
        // Reach grows with the face's size and the time since it was last seen (a walking person).
        const reach = Math.max(face.width, last.box.width) * 1.5 + 0.25 * (sample.t - last.t);
        if (distance <= reach && distance < bestDistance) {
          best = track;
          bestDistance = distance;
        }
      }
      const weight = face.width * face.height * face.score;
      if (best) {
        best.points.push({ t: sample.t, box: face });
        best.weight += weight;
        taken.add(best);
      } else {
        const track: Track = { scene, points: [{ t: sample.t, box: face }], weight };
        tracks.push(track);
        taken.add(track);
      }
    }
  }
  return tracks;
}

/** A track seen in a single frame only is more likely a false detection than a person. */
export function isPerson(track: Track, samplesInScene: number): boolean {
  return track.points.length >= Math.min(2, samplesInScene);
}

/**
 * The clip's face count: the most faces seen together in at least two
 * sampled frames (one stray detection does not add a person).
 */
export function facesCount(samples: FaceSample[]): number {
  const counts = samples.map((s) => s.faces.length).sort((a, b) => b - a);
  if (counts.length === 0) return 0;
  if (counts.length === 1) return counts[0]!;
  return counts[1]!;
}
