/**
 * The fleet, for operators: the same figures as GET /admin/v1/fleet, opened
 * by the deployment's ADMIN_TOKEN (typed in, posted, never stored or echoed;
 * no account session involved). The form posts to itself, so the page's
 * Origin check applies and a reload asks for the token again.
 */
import { Hono } from "hono";
import { isAdminToken } from "../../admin/guard.ts";
import { fleetOverview, type FleetOverview } from "../../fleet/overview.ts";
import { Alert, Field } from "../components/form.tsx";
import { Layout } from "../components/layout.tsx";
import { Time } from "../components/time.tsx";
import type { DashboardEnv } from "../env.ts";

const TOKEN_FIELD = "admin_token";

function TokenForm({ errors = [] }: { errors?: string[] }) {
  return (
    <div class="card narrow">
      <Alert messages={errors} />
      <form method="post" action="/dashboard/fleet">
        <Field id={TOKEN_FIELD} label="Admin token" hint="The deployment's ADMIN_TOKEN. It is sent with this form only and kept nowhere.">
          {(describedBy) => <input id={TOKEN_FIELD} name={TOKEN_FIELD} type="password" autocomplete="current-password" required maxlength={512} aria-describedby={describedBy} autofocus />}
        </Field>
        <div class="actions">
          <button type="submit">Show the fleet</button>
        </div>
      </form>
    </div>
  );
}

function Counts({ title, counts }: { title: string; counts: Record<string, number> }) {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {entries.length === 0 ? (
        <p>None.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Count</th>
              </tr>
            </thead>
            <tbody>
              {entries.map(([code, n]) => (
                <tr>
                  <td>
                    <code>{code}</code>
                  </td>
                  <td data-count={code}>{n}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Overview({ fleet }: { fleet: FleetOverview }) {
  const oldest = fleet.oldest_wait_seconds;
  return (
    <>
      <section class="card" aria-labelledby="engines-heading">
        <h2 id="engines-heading">Engines</h2>
        <dl class="figures">
          <dt>Running</dt>
          <dd data-fleet="running">{fleet.running}</dd>
          <dt>Starting (granted, not accepted yet)</dt>
          <dd data-fleet="starting">{fleet.starting}</dd>
          <dt>Stopping (still holding a slot)</dt>
          <dd data-fleet="stopping">{fleet.stopping}</dd>
          <dt>Free</dt>
          <dd data-fleet="free">{fleet.free}</dd>
          <dt>Capacity</dt>
          <dd data-fleet="capacity">{fleet.capacity}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="line-heading">
        <h2 id="line-heading">The line</h2>
        <dl class="figures">
          <dt>Waiting</dt>
          <dd data-fleet="waiting">{fleet.waiting}</dd>
          <dt>Oldest wait</dt>
          <dd data-fleet="oldest-wait">{oldest === null ? "nobody waits" : `${oldest} s`}</dd>
          <dt>Grants in the last minute</dt>
          <dd data-fleet="grants-last-minute">{fleet.grants_last_minute}</dd>
          <dt>Grants per minute, last hour</dt>
          <dd data-fleet="grants-per-minute">{fleet.grants_per_minute_last_hour}</dd>
          <dt>Engines that accepted a job, last hour</dt>
          <dd>{fleet.starts_last_hour}</dd>
        </dl>
      </section>
      <Counts title="Failed jobs by code, last hour" counts={fleet.job_failures_last_hour} />
      <Counts title="Refused starts by cause, last hour (retried, not failures)" counts={fleet.start_failures_last_hour} />
      <p class="hint">
        As of <Time iso={fleet.at} />. Capacity: ENGINE_MAX_INSTANCES {fleet.settings.engine_max_instances} within ENGINE_VCPU_LIMIT{" "}
        {fleet.settings.vcpu_limit} / {fleet.settings.instance_vcpu} vCPU per instance; starts retried for {fleet.settings.start_budget_seconds} s.
      </p>
    </>
  );
}

export const fleetPages = new Hono<DashboardEnv>()
  .get("/", (c) =>
    c.html(
      <Layout title="Fleet" nonce={c.get("nonce")} session={null}>
        <TokenForm />
      </Layout>,
    ),
  )
  .post("/", async (c) => {
    const form = await c.req.parseBody();
    const token = typeof form[TOKEN_FIELD] === "string" ? form[TOKEN_FIELD] : "";
    if (!(await isAdminToken(c.env, token))) {
      return c.html(
        <Layout title="Fleet" nonce={c.get("nonce")} session={null}>
          <TokenForm errors={["That is not this deployment's admin token."]} />
        </Layout>,
        401,
      );
    }
    const fleet = await fleetOverview(c.env);
    return c.html(
      <Layout title="Fleet" nonce={c.get("nonce")} session={null}>
        <Overview fleet={fleet} />
        <TokenForm />
      </Layout>,
    );
  });
