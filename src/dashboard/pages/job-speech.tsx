/**
 * A job's speech in the dashboard: its transcript page (sentences with their
 * times, downloads as WebVTT, SRT or text) and each clip's WebVTT captions
 * served on the dashboard's own origin, so the clip player's <track> loads
 * without the {cdn_url} bucket needing a CORS rule.
 */
import { Hono, type Context } from "hono";
import { listClips } from "../../db/clips.ts";
import { findAccountJob, type Job } from "../../db/jobs.ts";
import { isJobId } from "../../jobs/ids.ts";
import { captionKeysOf } from "../../jobs/present.ts";
import { loadTranscript, noTranscriptReason, TRANSCRIPT_RENDERINGS } from "../../jobs/transcript-store.ts";
import { Layout } from "../components/layout.tsx";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";

const SOURCE_LABELS: Record<string, string> = {
  workers_ai: "speech-to-text (Workers AI)",
  subtitle_track: "the video's subtitle track",
  platform_subtitles: "the platform's subtitles",
  captions_url: "the captions file named at submission",
};

async function ownJob(c: Context<DashboardEnv>): Promise<Job | null> {
  const id = c.req.param("id") ?? "";
  return isJobId(id) ? findAccountJob(c.env.DB, sessionOf(c).accountId, id) : null;
}

function clock(seconds: number): string {
  const whole = Math.floor(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

export function transcriptSourceLabel(source: string): string {
  return SOURCE_LABELS[source] ?? source;
}

export const jobSpeechPages = new Hono<DashboardEnv>()
  .get("/:id/transcript", async (c) => {
    const job = await ownJob(c);
    if (!job) return c.text("Not found", 404);
    const transcript = await loadTranscript(c.env, job);
    const format = c.req.query("format");
    if (transcript && (format === "vtt" || format === "srt" || format === "txt")) {
      const { contentType, extension, render } = TRANSCRIPT_RENDERINGS[format];
      return c.body(render(transcript), 200, {
        "Content-Type": contentType,
        "Content-Disposition": `attachment; filename="${job.id}.${extension}"`,
      });
    }
    const session = sessionOf(c);
    return c.html(
      <Layout title="Transcript" nonce={c.get("nonce")} session={session} current="jobs">
        <p>
          <a href="/dashboard/jobs">Back to jobs</a>
        </p>
        <section class="card" aria-labelledby="transcript-heading">
          <h2 id="transcript-heading">{job.title ?? job.videoUrl}</h2>
          {transcript ? (
            <>
              <p class="meta">
                From {transcriptSourceLabel(transcript.source)}
                {transcript.language ? `, language ${transcript.language}` : ""}, {transcript.words.length} words. Download as{" "}
                <a href={`/dashboard/jobs/${job.id}/transcript?format=vtt`}>WebVTT</a>,{" "}
                <a href={`/dashboard/jobs/${job.id}/transcript?format=srt`}>SRT</a> or{" "}
                <a href={`/dashboard/jobs/${job.id}/transcript?format=txt`}>text</a>.
              </p>
              <ol class="transcript">
                {transcript.sentences.map((sentence) => (
                  <li>
                    <span class="meta">{clock(sentence.start)}</span> {sentence.text}
                  </li>
                ))}
              </ol>
            </>
          ) : (
            <p>{noTranscriptReason(job)}</p>
          )}
        </section>
      </Layout>,
      transcript ? 200 : 404,
    );
  })
  .get("/:id/clips/:index/captions.vtt", async (c) => {
    const job = await ownJob(c);
    const index = Number(c.req.param("index"));
    if (!job || job.status !== "completed" || !/^\d{1,2}$/.test(c.req.param("index"))) return c.text("Not found", 404);
    const clip = (await listClips(c.env.DB, job.id)).find((candidate) => candidate.index === index);
    // The published sidecar (public anyway once the job completed), read from the bucket on this origin.
    const keys = clip ? captionKeysOf(clip) : null;
    const object = keys ? await c.env.CLIPS.get(keys.vtt) : null;
    if (!object) return c.text("Not found", 404);
    return c.body(await object.text(), 200, { "Content-Type": "text/vtt; charset=utf-8", "Cache-Control": "private, max-age=3600" });
  });
