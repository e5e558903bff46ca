/** Usage: the period's credits, the plan, and what each job used. */
import { Hono } from "hono";
import { getUsage } from "../../db/accounts.ts";
import { listJobs, type Job } from "../../db/jobs.ts";
import { Layout } from "../components/layout.tsx";
import { Time } from "../components/time.tsx";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";

const JOBS_SHOWN = 50;

function creditsOf(job: Job): string {
  if (job.status === "completed") return String(job.creditsCharged);
  if (job.status === "queued" || job.status === "processing") return job.creditsReserved > 0 ? `${job.creditsReserved} reserved` : "not yet known";
  return "0 (not charged)";
}

export const usagePages = new Hono<DashboardEnv>().get("/", async (c) => {
  const session = sessionOf(c);
  const usage = await getUsage(c.env.DB, session.accountId);
  if (!usage) throw new Error(`account ${session.accountId} of a live session is missing`);
  const jobs = await listJobs(c.env.DB, { accountId: session.accountId, status: null, limit: JOBS_SHOWN, after: null });
  const total = usage.plan.creditsPerPeriod + usage.creditsGranted;
  return c.html(
    <Layout title="Usage" nonce={c.get("nonce")} session={session} current="usage">
      <section class="card" aria-labelledby="credits-heading">
        <h2 id="credits-heading">Credits this period</h2>
        <p class="big" data-credits>
          {usage.creditsRemaining} of {usage.plan.creditsPerPeriod} credits remaining
        </p>
        <dl class="figures">
          <dt>Plan</dt>
          <dd data-plan>{usage.plan.name}</dd>
          <dt>Period</dt>
          <dd>
            <Time iso={usage.periodStart} /> to <Time iso={usage.periodEnd} />
          </dd>
          <dt>Used</dt>
          <dd>{usage.creditsUsed}</dd>
          <dt>Reserved by running jobs</dt>
          <dd>{usage.creditsReserved}</dd>
          <dt>Granted this period</dt>
          <dd>{usage.creditsGranted}</dd>
          <dt>Available in total</dt>
          <dd>{total}</dd>
        </dl>
        <p class="hint">
          One credit is one started minute of source video, charged when a job completes. Failed and canceled jobs cost nothing.
        </p>
      </section>
      <section aria-labelledby="per-job-heading">
        <h2 id="per-job-heading">Credits per job</h2>
        {jobs.length === 0 ? (
          <p>No jobs yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Submitted</th>
                  <th scope="col">Status</th>
                  <th scope="col">Source length</th>
                  <th scope="col">Credits</th>
                </tr>
              </thead>
              <tbody>
                {jobs.map((job) => (
                  <tr data-job={job.id}>
                    <td data-label="Job">{job.title ?? job.id}</td>
                    <td data-label="Submitted">
                      <Time iso={job.createdAt} />
                    </td>
                    <td data-label="Status">{job.status}</td>
                    <td data-label="Source length">{job.sourceDurationSeconds !== null ? `${Math.round(job.sourceDurationSeconds)} s` : "—"}</td>
                    <td data-label="Credits" data-credits-used>{creditsOf(job)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </Layout>,
  );
});
