import { LANGUAGE_NAMES, type LanguageCode } from "#contract";
import type { Clip } from "../../db/clips.ts";
import type { Job } from "../../db/jobs.ts";
import { reasonsInWords } from "../../jobs/reason-words.ts";
import { captionKeysOf } from "../../jobs/present.ts";
import { cdnUrl } from "../../jobs/storage.ts";
import { Time } from "./time.tsx";

function seconds(value: number): string {
  const whole = Math.floor(value);
  const m = Math.floor(whole / 60);
  const s = whole % 60;
  return `${m}:${String(s).padStart(2, "0")}`;
}

function ClipView({ cdnBase, clip, position, language }: { cdnBase: string; clip: Clip; position: number; language: string | null }) {
  const url = cdnUrl(cdnBase, clip.objectKey);
  const thumbnail = cdnUrl(cdnBase, clip.thumbnailKey);
  // Removed pauses and fillers make the clip shorter than its span in the source.
  const length = clip.durationSeconds ?? clip.endSeconds - clip.startSeconds;
  const cut = removedInWords(clip);
  const captions = captionKeysOf(clip);
  return (
    <li class="clip">
      <video controls preload="metadata" playsinline poster={thumbnail} src={url} width={clip.width} height={clip.height} aria-label={`Clip ${position}`}>
        {clip.sidecars ? (
          // Served by the dashboard itself: a <track> must be same-origin (or CORS), the clip need not be.
          <track kind="captions" src={`/dashboard/jobs/${clip.jobId}/clips/${clip.index}/captions.vtt`} srclang={language ?? undefined} label="Captions" default />
        ) : null}
      </video>
      <p class="meta">
        <img src={thumbnail} alt={`Thumbnail of clip ${position}`} width={clip.width} height={clip.height} loading="lazy" />
        <strong>Clip {position}</strong>: {seconds(clip.startSeconds)}–{seconds(clip.endSeconds)} of the source ({length.toFixed(1)} s),
        score {clip.score.toFixed(2)}, {clip.width}×{clip.height}
      </p>
      {clip.title ? <p class="clip-title">{clip.title}</p> : null}
      <p class="meta" title={clip.reasons.join(", ")}>
        Chosen for {reasonsInWords(clip.reasons)}
      </p>
      {clip.promptMatch !== null ? <p class="meta" data-prompt-match>Matches the prompt: {Math.round(clip.promptMatch * 100)}%</p> : null}
      {clip.scores ? (
        <p class="meta" data-judged-by={clip.judgedBy}>
          Judged by a model: hook {clip.scores.hook}, payoff {clip.scores.payoff}, stands alone {clip.scores.standalone}, energy {clip.scores.energy}
        </p>
      ) : null}
      {clip.description ? <p class="meta" data-post>Post: {clip.description}</p> : null}
      {clip.hashtags.length > 0 ? <p class="meta" data-hashtags>{clip.hashtags.join(" ")}</p> : null}
      {cut ? <p class="meta" data-removed>Cut out: {cut}</p> : null}
      {clip.text ? <p class="meta">Says: {clip.text}</p> : null}
      <p class="meta">
        <a href={url} download>
          Download clip {position} (MP4)
        </a>
        {captions ? (
          <>
            {" · captions "}
            <a href={cdnUrl(cdnBase, captions.vtt)} download>
              WebVTT
            </a>{" "}
            <a href={cdnUrl(cdnBase, captions.srt)} download>
              SRT
            </a>
          </>
        ) : null}
        {clip.captionsBurned ? " · captions burned in" : null}
      </p>
      <p class="meta">
        <a href={`/dashboard/jobs/${clip.jobId}/clips/${clip.index}`} data-edit-clip={String(clip.index)}>
          Fix clip {position}: span, caption words, title
        </a>
      </p>
    </li>
  );
}

/** "3 pauses (2.4 s) and 2 filler words (0.9 s)", or "" when nothing was removed. */
function removedInWords(clip: Clip): string {
  const parts: string[] = [];
  for (const [kind, one, many] of [["silence", "pause", "pauses"], ["filler", "filler word", "filler words"]] as const) {
    const spans = clip.removed.filter((span) => span.kind === kind);
    if (spans.length === 0) continue;
    const total = spans.reduce((sum, span) => sum + (span.end_seconds - span.start_seconds), 0);
    parts.push(`${spans.length} ${spans.length === 1 ? one : many} (${total.toFixed(1)} s)`);
  }
  return parts.join(" and ");
}

/** The job's steering in a line, or null when it has none. */
function steeringInWords(job: Job): string | null {
  const parts: string[] = [];
  if (job.config.prompt) parts.push(`prompt "${job.config.prompt}"`);
  if (job.timeRange) parts.push(`only ${seconds(job.timeRange.start_seconds)}–${seconds(job.timeRange.end_seconds)}`);
  if (job.config.remove_silence && job.config.remove_silence !== "off") parts.push(`silence removed (${job.config.remove_silence})`);
  if (job.config.remove_fillers) parts.push("filler words cut");
  return parts.length > 0 ? parts.join(", ") : null;
}

export function isActive(job: Job): boolean {
  return job.status === "queued" || job.status === "processing";
}

/** One job: status, live progress while active, failure reason, or its clips once completed. */
/** "French" for "fr"; the code itself for one the service does not name. */
function languageName(code: string): string {
  return code in LANGUAGE_NAMES ? LANGUAGE_NAMES[code as LanguageCode] : code;
}

export function JobCard({ job, clips, cdnBase }: { job: Job; clips: Clip[]; cdnBase: string }) {
  const active = isActive(job);
  return (
    <article class="card" id={`job-${job.id}`} data-job={job.id} data-live-job={active ? job.id : undefined} aria-labelledby={`job-${job.id}-title`}>
      <h3 id={`job-${job.id}-title`}>{job.title ?? job.videoUrl}</h3>
      <p class="meta">
        <span class={`status status-${job.status}`} data-status>
          {job.status}
        </span>{" "}
        {job.videoType}
        {job.configName ? (
          <>
            , configuration <code>{job.configName}</code>
          </>
        ) : (
          ", default settings"
        )}
        {" · submitted "}
        <Time iso={job.createdAt} />
        {job.completedAt ? (
          <>
            {" · finished "}
            <Time iso={job.completedAt} />
          </>
        ) : null}
      </p>
      <p class="meta">
        Source: <a href={job.videoUrl}>{job.videoUrl}</a>
      </p>
      {steeringInWords(job) ? <p class="meta" data-steering>Steered: {steeringInWords(job)}</p> : null}
      {active ? (
        <div>
          <label for={`progress-${job.id}`}>Progress</label>
          <progress id={`progress-${job.id}`} max={100} value={job.progress} aria-describedby={`step-${job.id}`}>
            {job.progress}%
          </progress>
          <p class="meta" id={`step-${job.id}`} data-step aria-live="polite">
            {job.step} ({job.progress}%)
          </p>
        </div>
      ) : null}
      {job.status === "failed" ? (
        <p class="error">
          Failed ({job.errorCode ?? "internal_error"}): {job.errorMessage ?? "The job failed."} No credits were charged.
        </p>
      ) : null}
      {job.status === "completed" ? (
        <>
          <p class="meta">
            {clips.length} clip{clips.length === 1 ? "" : "s"}
            {job.sourceDurationSeconds !== null ? ` from ${seconds(job.sourceDurationSeconds)} of video` : ""}, {job.creditsCharged} credit
            {job.creditsCharged === 1 ? "" : "s"} used.
          </p>
          <p class="meta" data-transcript>
            {job.transcript ? (
              <>
                Transcript: {job.transcript.word_count} words{job.transcript.language ? ` (${job.transcript.language})` : ""}.{" "}
                <a href={`/dashboard/jobs/${job.id}/transcript`}>Read the transcript</a>
              </>
            ) : (
              `No transcript${job.transcriptUnavailableReason ? `: ${job.transcriptUnavailableReason}` : "."}`
            )}
          </p>
          <p class="meta" data-export>
            Open the cut in an editor:{" "}
            <a href={`/dashboard/jobs/${job.id}/export?format=fcpxml`} download>
              Final Cut Pro / Resolve (FCPXML)
            </a>
            ,{" "}
            <a href={`/dashboard/jobs/${job.id}/export?format=edl`} download>
              Premiere (EDL)
            </a>
            ,{" "}
            <a href={`/dashboard/jobs/${job.id}/export?format=mlt`} download>
              Shotcut / Kdenlive (MLT)
            </a>
            ,{" "}
            <a href={`/dashboard/jobs/${job.id}/export?format=otio`} download>
              OpenTimelineIO
            </a>
            .
          </p>
          {job.translation ? (
            <p class="meta" data-translation={job.translation.status}>
              {job.translation.status === "translated" || job.translation.status === "not_needed"
                ? `Captions in ${languageName(job.translation.language)}.`
                : `Captions not in ${languageName(job.translation.language)}${job.translation.detail ? `: ${job.translation.detail}` : "."}`}
            </p>
          ) : null}
          {job.judgement ? (
            <p class="meta" data-judgement={job.judgement.judged_by}>
              {job.judgement.judged_by === "model" ? `Clips judged by ${job.judgement.model ?? "a model"} and the signals` : "Clips ranked by signals alone"}
              {job.judgement.fallback_reason ? `: ${job.judgement.fallback_reason}` : "."}
            </p>
          ) : null}
          {job.chapters.length > 0 ? (
            <details class="meta" data-chapters>
              <summary>Chapters ({job.chapters.length})</summary>
              <ol>
                {job.chapters.map((chapter) => (
                  <li>
                    {seconds(chapter.start_seconds)} {chapter.title}
                  </li>
                ))}
              </ol>
            </details>
          ) : null}
          <ol class="clips">
            {clips.map((clip) => (
              <ClipView
                cdnBase={cdnBase}
                clip={clip}
                position={clip.index + 1}
                language={job.translation?.status === "translated" ? job.translation.language : (job.transcript?.language ?? null)}
              />
            ))}
          </ol>
        </>
      ) : null}
    </article>
  );
}
