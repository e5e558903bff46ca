/** Jobs: submit (the API's rules, via jobs/submit), the account's jobs newest first, live progress. */
import { Hono, type Context } from "hono";
import { VIDEO_TYPE_DESCRIPTIONS } from "../../jobs/video-types.ts";
import { getUsage } from "../../db/accounts.ts";
import { listClips, listClipsOfJobs } from "../../db/clips.ts";
import { listConfigs } from "../../db/configs.ts";
import { findAccountJob, listJobs, type Job } from "../../db/jobs.ts";
import { CAPTION_LANGUAGES, LANGUAGE_NAMES, MAX_PROMPT_CHARS, REMOVE_SILENCE_MODES, SPEECH_LANGUAGES, VIDEO_TYPES, type LanguageCode } from "#contract";
import { AppError, problemStatus } from "../../http/errors.ts";
import { DomainError } from "../../domain/errors.ts";
import { decodeCursor, encodeCursor } from "../../jobs/cursor.ts";
import { isJobId } from "../../jobs/ids.ts";
import { holdUntilEnd } from "../../jobs/held-read.ts";
import { presentJob } from "../../jobs/present.ts";
import { preferredWaitSeconds } from "../../http/prefer.ts";
import { withLiveState } from "../../jobs/read-path.ts";
import { withQueuePosition } from "../../fleet/queue-position.ts";
import { submitJob } from "../../jobs/submit-request.ts";
import { REMOVE_SILENCE_LABELS } from "../components/config-form.tsx";
import { PROGRESS_SCRIPT, UPLOAD_SCRIPT } from "../assets/scripts.ts";
import { Alert, CsrfField, Field, Notice } from "../components/form.tsx";
import { isActive, JobCard } from "../components/job-card.tsx";
import { Layout } from "../components/layout.tsx";
import { clipPages } from "./clip-page.tsx";
import { jobExportPages } from "./job-export.ts";
import { jobSpeechPages } from "./job-speech.tsx";
import { emptyForm, formFromBody, submissionFromForm, type SubmitForm } from "./job-submission.ts";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";
import { DASHBOARD_UPLOADS_PATH } from "./uploads.ts";

export const JOBS_PER_PAGE = 20;

/** "As the configuration says" (empty), the field's null token, then the languages by name. */
function LanguageOptions({ value, codes, none }: { value: string; codes: readonly LanguageCode[]; none: [string, string] }) {
  const named = codes.map((code): [string, string] => [code, `${LANGUAGE_NAMES[code]} (${code})`]).sort((a, b) => a[1].localeCompare(b[1]));
  return (
    <>
      {[["", "As the configuration says"], none, ...named].map(([code, label]) => (
        <option value={code} selected={code === value}>
          {label}
        </option>
      ))}
    </>
  );
}

function SubmitJobForm({ csrf, configNames, form }: { csrf: string; configNames: string[]; form: SubmitForm }) {
  return (
    <form method="post" action="/dashboard/jobs">
      <CsrfField token={csrf} />
      <input type="hidden" name="idempotency_key" value={form.idempotencyKey} />
      <Field id="video-url" label="Video URL" hint="A video page or a direct link to a video file (http or https).">
        {(describedBy) => (
          <input id="video-url" name="video_url" type="url" required={form.uploadId === ""} maxlength={2048} value={form.videoUrl} aria-describedby={describedBy} />
        )}
      </Field>
      {/* Shown by UPLOAD_SCRIPT: uploading needs it. */}
      <div class="upload-zone" data-upload-zone data-endpoint={DASHBOARD_UPLOADS_PATH} data-csrf={csrf} hidden>
        <label for="video-file">Or upload a video file (drop it here)</label>
        <input id="video-file" type="file" accept="video/*,.mkv,.mov,.mp4,.webm" />
        <progress max={100} value={0} hidden>
          0%
        </progress>
        <p class="hint" role="status" aria-live="polite" data-upload-status></p>
        <input type="hidden" name="upload_id" value={form.uploadId} />
      </div>
      <div class="grid">
        <Field id="video-type" label="Video type" hint="Chooses how the best moments are found.">
          {(describedBy) => (
            <select id="video-type" name="video_type" aria-describedby={describedBy}>
              {VIDEO_TYPES.map((type) => (
                <option value={type} selected={type === (form.videoType || "general")}>
                  {type}: {VIDEO_TYPE_DESCRIPTIONS[type].split(":")[0]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field id="config-name" label="Configuration">
          {(describedBy) => (
            <select id="config-name" name="config_name" aria-describedby={describedBy}>
              <option value="">Default settings</option>
              {configNames.map((name) => (
                <option value={name} selected={name === form.configName}>
                  {name}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field id="captions-url" label="Captions file (optional)" hint="An SRT or WebVTT file of what is said, used when the video has no better transcript.">
        {(describedBy) => <input id="captions-url" name="captions_url" type="url" maxlength={2048} value={form.captionsUrl} aria-describedby={describedBy} />}
      </Field>
      <fieldset>
        <legend>Steer the clips (optional)</legend>
        <Field id="job-prompt" label="Prompt" hint={`Only moments about this topic, e.g. "the parts about pricing". Up to ${MAX_PROMPT_CHARS} characters; needs speech or a captions file.`}>
          {(describedBy) => (
            <textarea id="job-prompt" name="prompt" rows={2} maxlength={MAX_PROMPT_CHARS} aria-describedby={describedBy}>
              {form.prompt}
            </textarea>
          )}
        </Field>
        <div class="grid">
          <Field id="range-start" label="From" hint="Seconds or mm:ss. Empty with To empty: the whole video.">
            {(describedBy) => <input id="range-start" name="range_start" inputmode="decimal" maxlength={12} value={form.rangeStart} aria-describedby={describedBy} />}
          </Field>
          <Field id="range-end" label="To" hint="Seconds or mm:ss (h:mm:ss for long videos). Charged on this range only.">
            {(describedBy) => <input id="range-end" name="range_end" inputmode="decimal" maxlength={12} value={form.rangeEnd} aria-describedby={describedBy} />}
          </Field>
          <Field id="remove-silence" label="Remove silence">
            {(describedBy) => (
              <select id="remove-silence" name="remove_silence" aria-describedby={describedBy}>
                <option value="">As the configuration says</option>
                {REMOVE_SILENCE_MODES.map((mode) => (
                  <option value={mode} selected={mode === form.removeSilence}>
                    {REMOVE_SILENCE_LABELS[mode]}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field id="remove-fillers" label="Filler words">
            {(describedBy) => (
              <select id="remove-fillers" name="remove_fillers" aria-describedby={describedBy}>
                <option value="">As the configuration says</option>
                <option value="true" selected={form.removeFillers === "true"}>Cut um, uh, erm...</option>
                <option value="false" selected={form.removeFillers === "false"}>Keep them</option>
              </select>
            )}
          </Field>
        </div>
      </fieldset>
      <div class="grid">
        <Field id="job-language" label="Spoken language" hint="A hint for speech-to-text.">
          {(describedBy) => (
            <select id="job-language" name="language" aria-describedby={describedBy}>
              <LanguageOptions value={form.language} codes={SPEECH_LANGUAGES} none={["auto", "Detect it"]} />
            </select>
          )}
        </Field>
        <Field id="job-caption-language" label="Caption language" hint="Translate captions and clip text; clips are still cut on the spoken sentences.">
          {(describedBy) => (
            <select id="job-caption-language" name="caption_language" aria-describedby={describedBy}>
              <LanguageOptions value={form.captionLanguage} codes={CAPTION_LANGUAGES} none={["spoken", "As spoken"]} />
            </select>
          )}
        </Field>
      </div>
      <div class="actions">
        <button type="submit">Submit video</button>
      </div>
    </form>
  );
}

interface PageState {
  form?: SubmitForm;
  errors?: string[];
  /** The refusal's problem code, as the API would answer it (data-code on the alert). */
  errorCode?: string;
  notice?: string;
}

async function renderJobsPage(c: Context<DashboardEnv>, state: PageState, status: 200 | 400 | 402 | 404 | 409 | 410 | 422 | 503 = 200) {
  const session = sessionOf(c);
  const before = c.req.query("before");
  const after = before ? decodeCursor(before) : null;
  const rows = await listJobs(c.env.DB, { accountId: session.accountId, status: null, limit: JOBS_PER_PAGE + 1, after });
  const page = rows.slice(0, JOBS_PER_PAGE);
  const last = page.at(-1);
  const older = rows.length > JOBS_PER_PAGE && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
  const clipsByJob = await listClipsOfJobs(c.env.DB, page.filter((job) => job.status === "completed").map((job) => job.id));
  const configNames = (await listConfigs(c.env.DB, session.accountId)).map((saved) => saved.name);
  const live = page.some(isActive);
  return c.html(
    <Layout title="Jobs" nonce={c.get("nonce")} session={session} current="jobs" scripts={live ? [UPLOAD_SCRIPT, PROGRESS_SCRIPT] : [UPLOAD_SCRIPT]}>
      {state.notice ? <Notice>{state.notice}</Notice> : null}
      <section class="card" aria-labelledby="submit-heading">
        <h2 id="submit-heading">Submit a video</h2>
        <Alert messages={state.errors ?? []} code={state.errorCode} />
        <SubmitJobForm csrf={session.csrfToken} configNames={configNames} form={state.form ?? emptyForm()} />
      </section>
      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Your jobs</h2>
        {page.length === 0 ? <p>No jobs yet.</p> : null}
        {page.map((job) => (
          <JobCard job={job} clips={clipsByJob.get(job.id) ?? []} cdnBase={c.env.CDN_URL} />
        ))}
        {older ? (
          <p>
            <a href={`/dashboard/jobs?before=${encodeURIComponent(older)}`}>Older jobs</a>
          </p>
        ) : null}
      </section>
    </Layout>,
    status,
  );
}

async function ownJob(c: Context<DashboardEnv>): Promise<Job | null> {
  const id = c.req.param("id") ?? "";
  const job = isJobId(id) ? await findAccountJob(c.env.DB, sessionOf(c).accountId, id) : null;
  // Progress and step of an active job live in its account's Durable Object, not D1.
  return job && withLiveState(c.env, job);
}

export const jobPages = new Hono<DashboardEnv>()
  .get("/", (c) => {
    const queued = c.req.query("queued");
    return renderJobsPage(c, queued && isJobId(queued) ? { notice: `Job ${queued} submitted.` } : {});
  })
  .post("/", async (c) => {
    const { accountId } = sessionOf(c);
    const form = formFromBody(await c.req.parseBody());
    try {
      const input = submissionFromForm(form);
      const usage = await getUsage(c.env.DB, accountId);
      if (!usage) throw new AppError("not_found", "Account not found.");
      // The door POST /api/v1/jobs and the MCP tool use; the form's key makes a resent form one job.
      const { answer } = await submitJob(c.env, { accountId, plan: usage.plan }, input, form.idempotencyKey === "" ? undefined : form.idempotencyKey);
      // Post/redirect/get: reloading the page never submits the video again.
      return c.redirect(`/dashboard/jobs?queued=${answer.job_id}`, 303);
    } catch (err) {
      if (!(err instanceof DomainError) || (problemStatus(err) >= 500 && err.code !== "service_unavailable")) throw err;
      const status = ([400, 402, 404, 409, 410, 422, 503] as const).find((s) => s === problemStatus(err)) ?? 400;
      const fields = (err.errors ?? []).map((e) => `${e.path}: ${e.message}`);
      return renderJobsPage(c, { form, errors: [err.message, ...fields], errorCode: err.code }, status);
    }
  })
  // `Prefer: wait=N` as on the API's job read: the job page asks with wait=1 and again as soon as it is answered,
  // so progress still comes about once a second and the job's end shows as it commits, not up to a second later.
  .get("/:id/status.json", async (c) => {
    let owned = await ownJob(c);
    if (!owned) return c.json({ error: "not_found" }, 404);
    const waitSeconds = preferredWaitSeconds(c.req.header("Prefer"));
    if (waitSeconds !== null && isActive(owned)) {
      const held = await holdUntilEnd(c.env, owned.accountId, owned.id, waitSeconds);
      if (held?.held) c.header("Preference-Applied", `wait=${waitSeconds}`);
      owned = (await ownJob(c)) ?? owned;
    }
    const job = await withQueuePosition(c.env, owned);
    const clips = job.status === "completed" ? await listClips(c.env.DB, job.id) : [];
    return c.json(presentJob(c.env.CDN_URL, job, clips));
  })
  .get("/:id/card", async (c) => {
    const job = await ownJob(c);
    if (!job) return c.text("Not found", 404);
    const clips = job.status === "completed" ? await listClips(c.env.DB, job.id) : [];
    return c.html(<JobCard job={job} clips={clips} cdnBase={c.env.CDN_URL} />);
  })
  .route("/", jobSpeechPages)
  .route("/", jobExportPages)
  .route("/", clipPages);
