/**
 * Captions for bench:engine's job, so that its clips carry what the default
 * configuration (captions "both") gives a client whose video has speech:
 * burned captions and WebVTT/SubRip sidecars.
 *
 * The local stack has no speech-to-text (`wrangler dev --local` has no
 * Workers AI), so without help the bench job has no transcript and its clips
 * are crop + scale only. The bench therefore names a captions file at
 * submission (captions_url, a documented input): a SubRip file of short
 * cues inside the source's spoken phrases, which the engine takes as the
 * transcript.
 *
 * The floor then burns the same captions: `floorCaptionFiles` reads the
 * job's stored transcript through the API and builds each clip's ASS file
 * with the engine's own caption code (captions/index.ts), for the clips the
 * job reports as burned, so the floor draws the same text at the same times.
 */
import path from "node:path";
import { DEFAULT_CLIP_CONFIG, Transcript } from "#contract";
import { prepareClipCaptions } from "../../container/src/captions/index.ts";
import type { ApiClient, JobView } from "../../scripts/local-stack/api-client.ts";

const WORDS = ["so", "today", "we", "look", "at", "how", "the", "engine", "cuts", "long", "videos", "into", "short", "clips", "that", "people", "actually", "watch", "and", "share"];
/** A cue every CUE_EVERY seconds, lasting CUE_SECONDS, of CUE_WORDS words: about the pace of speech. */
const CUE_EVERY = 3;
const CUE_SECONDS = 2.7;
const CUE_WORDS = 7;

function srtTime(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)},${pad(ms % 1000, 3)}`;
}

/**
 * A SubRip file: cues inside the source's spoken phrases when they are known
 * (the generated source's facts), a cue every CUE_EVERY seconds of each, else
 * over the whole `durationSeconds`.
 */
export function benchCaptionsSrt(durationSeconds: number, phrases?: readonly { start: number; end: number }[]): string {
  const spans = phrases && phrases.length > 0 ? phrases : [{ start: 0.5, end: durationSeconds }];
  const cues: string[] = [];
  let w = 0;
  for (const span of spans) {
    for (let t = span.start; t < Math.min(span.end, durationSeconds) - 0.3; t += CUE_EVERY) {
      const end = Math.min(t + CUE_SECONDS, span.end, durationSeconds);
      const words = Array.from({ length: CUE_WORDS }, () => WORDS[w++ % WORDS.length]!);
      cues.push(`${cues.length + 1}\n${srtTime(t)} --> ${srtTime(end)}\n${words.join(" ")}\n`);
    }
  }
  return cues.join("\n");
}

/**
 * Per clip of the completed job, the ASS file the engine burned into it
 * (rebuilt from the job's transcript), or null for a clip without burned
 * captions. Written under `dir`.
 */
export async function floorCaptionFiles(client: ApiClient, job: JobView, dir: string): Promise<(string | null)[]> {
  const clips = job.clips ?? [];
  if (!clips.some((clip) => clip.captions_burned === true)) return clips.map(() => null);
  const answer = await client.request("GET", `/api/v1/jobs/${job.job_id}/transcript`);
  if (answer.status !== 200) throw new Error(`the job's clips burned captions but its transcript answered ${answer.status}`);
  const transcript = Transcript.parse(answer.body);
  return Promise.all(
    clips.map(async (clip, index) => {
      if (clip.captions_burned !== true) return null;
      const captions = await prepareClipCaptions({
        transcript,
        config: DEFAULT_CLIP_CONFIG,
        start: clip.start_seconds,
        end: clip.end_seconds,
        width: clip.width,
        height: clip.height,
        canBurn: true,
        file: (name) => path.join(dir, name),
        index,
        videoTitle: job.title ?? null,
      });
      if (!captions.assPath) throw new Error(`clip ${index} burned captions but none could be built for the floor`);
      return captions.assPath;
    }),
  );
}
