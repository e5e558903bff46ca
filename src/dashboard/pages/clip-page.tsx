/**
 * One clip of a completed job, to fix and render again: the clip, its span
 * with nudges, each caption word in its own field, its title, and a
 * Re-render button. The form goes through the same service as PATCH
 * /api/v1/jobs/{job_id}/clips/{index} (jobs/clip-edit/service.ts), with the
 * session in place of an API key; its refusals are shown with their problem
 * code. While the re-render runs the page says so and reloads itself until
 * the new version (or the failure) is there.
 */
import { Hono, type Context } from "hono";
import { getUsage } from "../../db/accounts.ts";
import { AppError, problemStatus } from "../../http/errors.ts";
import { DomainError } from "../../domain/errors.ts";
import { editClip, readClip, type ClipAnswer } from "../../jobs/clip-edit/service.ts";
import { isJobId } from "../../jobs/ids.ts";
import { CLIP_EDIT_SCRIPT } from "../assets/scripts.ts";
import { Alert, CsrfField, Field, Notice } from "../components/form.tsx";
import { Layout } from "../components/layout.tsx";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";
import { clipFormFromBody, clipFormOf, editFromForm, seconds, WORD_FIELD_PREFIX, type ClipForm } from "./clip-edit-form.ts";

const NUDGES = [-1, -0.1, 0.1, 1] as const;
const MAX_CLIP_INDEX = 19;

function nudgeLabel(by: number): string {
  return `${by > 0 ? "+" : "−"}${Math.abs(by)} s`;
}

function Nudges({ target, edge }: { target: string; edge: string }) {
  return (
    <div class="nudges" role="group" aria-label={`Move the ${edge}`}>
      {NUDGES.map((by) => (
        // Shown by CLIP_EDIT_SCRIPT; without it the field is typed in.
        <button type="button" class="secondary" data-nudge={target} data-by={String(by)} aria-label={`${edge} ${nudgeLabel(by)}`} hidden>
          {nudgeLabel(by)}
        </button>
      ))}
    </div>
  );
}

function EditState({ clip }: { clip: ClipAnswer }) {
  const edit = clip.edit;
  if (!edit) return null;
  if (edit.status === "failed") {
    return (
      <div class="alert" role="alert" data-edit-status="failed" data-code={edit.error?.code}>
        <p>
          The last re-render failed{edit.error ? ` (${edit.error.code}): ${edit.error.message}` : "."} Version {clip.version} is still published, and no
          credits were charged for the failed render.
        </p>
      </div>
    );
  }
  return (
    <p class="notice" role="status" data-edit-status={edit.status} data-edit-pending>
      {edit.status === "queued" ? "The re-render is queued" : "The clip is being rendered again"}; this page shows version {clip.version + 1} when it is ready.
    </p>
  );
}

function ClipEditForm({ action, csrf, clip, form, pending }: { action: string; csrf: string; clip: ClipAnswer; form: ClipForm; pending: boolean }) {
  return (
    <form method="post" action={action}>
      <CsrfField token={csrf} />
      <div class="grid">
        <div>
          <Field id="clip-start" label="Start (seconds of the source)">
            {(describedBy) => <input id="clip-start" name="start_seconds" inputmode="decimal" maxlength={12} value={form.start} aria-describedby={describedBy} />}
          </Field>
          <Nudges target="clip-start" edge="Start" />
        </div>
        <div>
          <Field id="clip-end" label="End (seconds of the source)">
            {(describedBy) => <input id="clip-end" name="end_seconds" inputmode="decimal" maxlength={12} value={form.end} aria-describedby={describedBy} />}
          </Field>
          <Nudges target="clip-end" edge="End" />
        </div>
      </div>
      <Field id="clip-title" label="Title">
        {(describedBy) => <input id="clip-title" name="title" maxlength={120} value={form.title} aria-describedby={describedBy} />}
      </Field>
      {clip.words.length > 0 ? (
        <fieldset class="words">
          <legend>Caption words (fix a word in place; its timing is kept)</legend>
          {clip.words.map((word) => {
            const value = form.words.get(word.index) ?? word.text;
            return (
              <input
                name={`${WORD_FIELD_PREFIX}${word.index}`}
                value={value}
                size={Math.max(3, value.length + 1)}
                maxlength={60}
                aria-label={`Word ${word.index + 1} at ${seconds(word.start_seconds)} s`}
                data-word={String(word.index)}
              />
            );
          })}
        </fieldset>
      ) : (
        <p class="meta">This clip has no caption words to fix (the job had no transcript).</p>
      )}
      <div class="actions">
        <button type="submit" disabled={pending}>
          Re-render
        </button>
      </div>
    </form>
  );
}

interface PageState {
  form?: ClipForm;
  errors?: string[];
  errorCode?: string;
  notice?: string;
}

function clipIndexOf(c: Context<DashboardEnv>): number | null {
  const text = c.req.param("index") ?? "";
  const index = /^\d{1,2}$/.test(text) ? Number(text) : Number.NaN;
  return Number.isInteger(index) && index <= MAX_CLIP_INDEX ? index : null;
}

/** The clip of the signed-in account, or null (no such job or clip, another account's, a deleted job). */
async function ownClip(c: Context<DashboardEnv>): Promise<{ jobId: string; clip: ClipAnswer } | null> {
  const jobId = c.req.param("id") ?? "";
  const index = clipIndexOf(c);
  if (!isJobId(jobId) || index === null) return null;
  try {
    return { jobId, clip: await readClip(c.env, sessionOf(c).accountId, jobId, index) };
  } catch (error) {
    if (error instanceof DomainError && (error.code === "not_found" || error.code === "job_not_completed")) return null;
    throw error;
  }
}

function notFound(c: Context<DashboardEnv>) {
  return c.html(
    <Layout title="Clip not found" nonce={c.get("nonce")} session={sessionOf(c)} current="jobs">
      <p>
        There is no such clip among your completed jobs. <a href="/dashboard/jobs">Back to your jobs</a>.
      </p>
    </Layout>,
    404,
  );
}

function renderClipPage(c: Context<DashboardEnv>, jobId: string, clip: ClipAnswer, state: PageState, status: 200 | 400 | 402 | 404 | 409 | 410 | 422 | 429 | 503 = 200) {
  const session = sessionOf(c);
  const action = `/dashboard/jobs/${jobId}/clips/${clip.index}`;
  const pending = clip.edit !== null && clip.edit.status !== "failed";
  return c.html(
    <Layout title={`Clip ${clip.index + 1}`} nonce={c.get("nonce")} session={session} current="jobs" scripts={[CLIP_EDIT_SCRIPT]}>
      <p>
        <a href={`/dashboard/jobs#job-${jobId}`}>Back to your jobs</a>
      </p>
      {state.notice ? <Notice>{state.notice}</Notice> : null}
      <section class="card clip-page" aria-labelledby="clip-heading" data-clip-version={String(clip.version)}>
        <h2 id="clip-heading">
          {clip.title ?? `Clip ${clip.index + 1}`} <span class="meta">(version {clip.version})</span>
        </h2>
        {clip.url ? (
          <video controls preload="metadata" playsinline poster={clip.thumbnail_url ?? undefined} src={clip.url} width={clip.width} height={clip.height} aria-label={`Clip ${clip.index + 1}, version ${clip.version}`}>
            {clip.captions ? <track kind="captions" src={`${action}/captions.vtt`} label="Captions" default /> : null}
          </video>
        ) : (
          // A clip cut from the source after the job: nothing is published before its first render.
          <p class="meta">This clip has not been rendered yet.</p>
        )}
        <p class="meta" data-span>
          {seconds(clip.start_seconds)}–{seconds(clip.end_seconds)} s of the source ({clip.duration_seconds.toFixed(1)} s long)
        </p>
        <EditState clip={clip} />
      </section>
      <section class="card" aria-labelledby="edit-heading">
        <h2 id="edit-heading">Fix this clip</h2>
        <p class="meta">
          Re-rendering makes version {clip.version + 1} at a new address; the current one stops being served once it is published. It is charged
          like a clip of its new length.
        </p>
        <Alert messages={state.errors ?? []} code={state.errorCode} />
        <ClipEditForm action={action} csrf={session.csrfToken} clip={clip} form={state.form ?? clipFormOf(clip)} pending={pending} />
      </section>
    </Layout>,
    status,
  );
}

export const clipPages = new Hono<DashboardEnv>()
  .get("/:id/clips/:index", async (c) => {
    const owned = await ownClip(c);
    if (!owned) return notFound(c);
    return renderClipPage(c, owned.jobId, owned.clip, c.req.query("edited") === "1" && owned.clip.edit ? { notice: "Re-render requested." } : {});
  })
  .post("/:id/clips/:index", async (c) => {
    const owned = await ownClip(c);
    if (!owned) return notFound(c);
    const { jobId, clip } = owned;
    const { accountId } = sessionOf(c);
    const form = clipFormFromBody(await c.req.parseBody());
    try {
      const body = editFromForm(form, clip);
      const usage = await getUsage(c.env.DB, accountId);
      if (!usage) throw new AppError("not_found", "Account not found.");
      await editClip(c.env, { accountId, plan: usage.plan }, jobId, clip.index, body);
      // Post/redirect/get: reloading the page never sends the edit again.
      return c.redirect(`/dashboard/jobs/${jobId}/clips/${clip.index}?edited=1`, 303);
    } catch (err) {
      if (!(err instanceof DomainError) || (problemStatus(err) >= 500 && err.code !== "service_unavailable")) throw err;
      const status = ([400, 402, 404, 409, 410, 422, 429, 503] as const).find((s) => s === problemStatus(err)) ?? 400;
      const fields = (err.errors ?? []).map((e) => `${e.path}: ${e.message}`);
      return renderClipPage(c, jobId, clip, { form, errors: [err.message, ...fields], errorCode: err.code }, status);
    }
  });
