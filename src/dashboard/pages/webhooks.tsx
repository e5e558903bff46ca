/**
 * Webhooks: endpoints (created with their secret shown once), which ones the
 * service disabled and why, and per endpoint its delivery log, a test event,
 * secret rotation, enable/disable, redelivery and deletion. The same rules as
 * the API (src/webhooks/manage.ts).
 */
import { Hono, type Context } from "hono";
import { deleteEndpoint, findEndpointDelivery, listDeliveries, listEndpoints, type Delivery, type WebhookEndpoint } from "../../db/webhooks.ts";
import { problemStatus } from "../../http/errors.ts";
import { DomainError } from "../../domain/errors.ts";
import { JOB_EVENT_TYPES } from "../../webhooks/events.ts";
import {
  changeEndpoint,
  createEndpoint,
  redeliver,
  requireEndpoint,
  rotateSecret,
  sendTestEvent,
  type EndpointInput,
} from "../../webhooks/manage.ts";
import { MAX_DESCRIPTION_LENGTH, MAX_WEBHOOKS_PER_ACCOUNT } from "../../webhooks/schemas.ts";
import { COPY_SCRIPT } from "../assets/scripts.ts";
import { Alert, ConfirmForm, CsrfField, Field, Notice } from "../components/form.tsx";
import { Layout } from "../components/layout.tsx";
import { Time } from "../components/time.tsx";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";

const BASE = "/dashboard/webhooks";

function StatusText({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (endpoint.enabled) {
    return endpoint.failingSince ? (
      <span class="flag">
        Enabled, failing since <Time iso={endpoint.failingSince} />
      </span>
    ) : (
      <span>Enabled</span>
    );
  }
  if (endpoint.disabledReason === "gone") return <strong class="flag">Disabled: the endpoint answered 410 Gone</strong>;
  if (endpoint.disabledReason === "failing") return <strong class="flag">Disabled: deliveries failed for about three days</strong>;
  return <span>Disabled</span>;
}

function eventsText(events: WebhookEndpoint["events"]): string {
  return events === "*" ? "All events" : events.join(", ");
}

function SecretNotice({ secret, heading }: { secret: string; heading: string }) {
  return (
    <Notice>
      <h2>{heading}</h2>
      <p>
        <strong>Copy the signing secret now: it will not be shown again.</strong> Verify each delivery's{" "}
        <code>webhook-signature</code> with it (Standard Webhooks).
      </p>
      <div class="secret">
        <code id="new-secret">{secret}</code>
        <button type="button" class="secondary" data-copy="new-secret" aria-describedby="copy-status" hidden>
          Copy secret
        </button>
      </div>
      <p id="copy-status" role="status" class="hint"></p>
    </Notice>
  );
}

interface ListProps {
  secret?: string;
  errors?: string[];
  notice?: string;
}

async function renderList(c: Context<DashboardEnv>, props: ListProps, status: 200 | 400 = 200) {
  const session = sessionOf(c);
  const endpoints = await listEndpoints(c.env.DB, session.accountId);
  return c.html(
    <Layout title="Webhooks" nonce={c.get("nonce")} session={session} current="webhooks" scripts={props.secret ? [COPY_SCRIPT] : []}>
      {props.secret ? <SecretNotice secret={props.secret} heading="Your new webhook endpoint" /> : null}
      {props.notice ? <Notice>{props.notice}</Notice> : null}
      <section class="card" aria-labelledby="create-heading">
        <h2 id="create-heading">Add an endpoint</h2>
        <Alert messages={props.errors ?? []} />
        <form method="post" action={BASE}>
          <CsrfField token={session.csrfToken} />
          <Field id="webhook-url" label="URL" hint="An https address that accepts POST requests.">
            {(describedBy) => <input id="webhook-url" name="url" type="url" required maxlength={2048} aria-describedby={describedBy} />}
          </Field>
          <Field id="webhook-description" label="Description" hint="Optional, e.g. “production”.">
            {(describedBy) => <input id="webhook-description" name="description" maxlength={MAX_DESCRIPTION_LENGTH} aria-describedby={describedBy} />}
          </Field>
          <fieldset>
            <legend>Events (none ticked: all events)</legend>
            {JOB_EVENT_TYPES.map((type) => (
              <label>
                <input type="checkbox" name="events" value={type} /> <code>{type}</code>
              </label>
            ))}
          </fieldset>
          <div class="actions">
            <button type="submit">Add endpoint</button>
          </div>
        </form>
        <p class="hint">At most {MAX_WEBHOOKS_PER_ACCOUNT} endpoints per account.</p>
      </section>
      <section aria-labelledby="list-heading">
        <h2 id="list-heading">Your endpoints</h2>
        {endpoints.length === 0 ? (
          <p>No endpoints yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {endpoints.map((endpoint) => (
                  <tr data-webhook-id={endpoint.id}>
                    <td data-label="URL">
                      <a href={`${BASE}/${endpoint.id}`}>{endpoint.url}</a>
                      {endpoint.description ? <span class="hint"> {endpoint.description}</span> : null}
                    </td>
                    <td data-label="Events">{eventsText(endpoint.events)}</td>
                    <td data-label="Status">
                      <StatusText endpoint={endpoint} />
                    </td>
                    <td data-label="Created">
                      <Time iso={endpoint.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </Layout>,
    status,
  );
}

function DeliveryRows({ endpoint, deliveries, csrfToken }: { endpoint: WebhookEndpoint; deliveries: Delivery[]; csrfToken: string }) {
  if (deliveries.length === 0) return <p>No deliveries in the last 30 days.</p>;
  return (
    <div class="table-wrap">
      <table class="stack">
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last answer</th>
            <th scope="col">Next attempt</th>
            <th scope="col"></th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((delivery) => (
            <tr data-delivery-id={delivery.id}>
              <td data-label="Event">
                <code>{delivery.eventType}</code> <span class="hint">{delivery.eventId}</span>
              </td>
              <td data-label="Status">{delivery.status}</td>
              <td data-label="Attempts">{delivery.attempts}</td>
              <td data-label="Last answer">
                {delivery.lastStatusCode ?? "none"}
                {delivery.lastLatencyMs !== null ? ` in ${delivery.lastLatencyMs} ms` : ""}
                {delivery.lastError ? <span class="hint"> {delivery.lastError}</span> : null}
              </td>
              <td data-label="Next attempt">
                <Time iso={delivery.nextAttemptAt} />
              </td>
              <td>
                {endpoint.enabled ? (
                  <form method="post" action={`${BASE}/${endpoint.id}/deliveries/${delivery.id}/redeliver`}>
                    <CsrfField token={csrfToken} />
                    <button type="submit" class="secondary">
                      Redeliver
                    </button>
                  </form>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface DetailProps {
  secret?: string;
  notice?: string;
  errors?: string[];
}

async function renderDetail(c: Context<DashboardEnv>, endpoint: WebhookEndpoint, props: DetailProps, status: 200 | 400 | 409 = 200) {
  const session = sessionOf(c);
  const deliveries = await listDeliveries(c.env.DB, { endpointId: endpoint.id, limit: 50, after: null });
  const action = (path: string, label: string, style = "secondary") => (
    <form method="post" action={`${BASE}/${endpoint.id}/${path}`}>
      <CsrfField token={session.csrfToken} />
      <button type="submit" class={style}>
        {label}
      </button>
    </form>
  );
  return c.html(
    <Layout title="Webhook endpoint" nonce={c.get("nonce")} session={session} current="webhooks" scripts={props.secret ? [COPY_SCRIPT] : []}>
      {props.secret ? <SecretNotice secret={props.secret} heading="New signing secret" /> : null}
      {props.notice ? <Notice>{props.notice}</Notice> : null}
      <Alert messages={props.errors ?? []} />
      <section class="card" aria-labelledby="endpoint-heading">
        <h2 id="endpoint-heading">
          <code>{endpoint.url}</code>
        </h2>
        <dl>
          <dt>Status</dt>
          <dd>
            <StatusText endpoint={endpoint} />
          </dd>
          <dt>Events</dt>
          <dd>{eventsText(endpoint.events)}</dd>
          {endpoint.description ? (
            <>
              <dt>Description</dt>
              <dd>{endpoint.description}</dd>
            </>
          ) : null}
          {endpoint.previousSecretExpiresAt && Date.parse(endpoint.previousSecretExpiresAt) > Date.now() ? (
            <>
              <dt>Previous secret</dt>
              <dd>
                Still signs until <Time iso={endpoint.previousSecretExpiresAt} />
              </dd>
            </>
          ) : null}
        </dl>
        <div class="actions">
          {endpoint.enabled ? action("test", "Send test event") : null}
          {endpoint.enabled ? action("disable", "Disable") : action("enable", "Enable")}
          {action("rotate", "Rotate secret")}
          <a class="button danger" href={`${BASE}/${endpoint.id}/delete`}>
            Delete…
          </a>
        </div>
      </section>
      <section aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Deliveries</h2>
        <DeliveryRows endpoint={endpoint} deliveries={deliveries} csrfToken={session.csrfToken} />
      </section>
      <p>
        <a href={BASE}>All endpoints</a>
      </p>
    </Layout>,
    status,
  );
}

function formEvents(values: (string | File)[]): EndpointInput["events"] {
  const events = values.filter((v): v is string => typeof v === "string");
  return events.length === 0 ? "*" : events;
}

function messagesOf(err: unknown): string[] {
  if (!(err instanceof DomainError) || problemStatus(err) >= 500) throw err;
  return err.errors?.map((e) => e.message) ?? [err.message];
}

async function ownEndpoint(c: Context<DashboardEnv>): Promise<WebhookEndpoint | null> {
  try {
    return await requireEndpoint(c.env, sessionOf(c).accountId, c.req.param("id") ?? "");
  } catch {
    return null;
  }
}

/** Runs an action on the visitor's endpoint and shows its page again, with the action's error if it had one. */
async function onEndpoint(
  c: Context<DashboardEnv>,
  act: (endpoint: WebhookEndpoint) => Promise<DetailProps>,
) {
  const endpoint = await ownEndpoint(c);
  if (!endpoint) return c.redirect(BASE, 303);
  let props: DetailProps;
  let status: 200 | 409 = 200;
  try {
    props = await act(endpoint);
  } catch (err) {
    props = { errors: messagesOf(err) };
    status = 409;
  }
  const fresh = await ownEndpoint(c);
  return fresh ? renderDetail(c, fresh, props, status) : c.redirect(BASE, 303);
}

export const webhookPages = new Hono<DashboardEnv>()
  .get("/", (c) => renderList(c, {}))
  .post("/", async (c) => {
    const { accountId } = sessionOf(c);
    const body = await c.req.parseBody({ all: true });
    const one = (value: unknown) => (typeof value === "string" ? value : "");
    const rawEvents = body.events;
    const events = formEvents(Array.isArray(rawEvents) ? rawEvents : rawEvents === undefined ? [] : [rawEvents]);
    try {
      const endpoint = await createEndpoint(c.env, accountId, { url: one(body.url), description: one(body.description), events });
      return renderList(c, { secret: endpoint.secret });
    } catch (err) {
      return renderList(c, { errors: messagesOf(err) }, 400);
    }
  })
  .get("/:id", async (c) => {
    const endpoint = await ownEndpoint(c);
    return endpoint ? renderDetail(c, endpoint, {}) : c.redirect(BASE, 303);
  })
  .post("/:id/test", (c) =>
    onEndpoint(c, async (endpoint) => {
      await sendTestEvent(c.env, endpoint.accountId, endpoint.id);
      return { notice: "A webhook.test event is on its way." };
    }),
  )
  .post("/:id/enable", (c) =>
    onEndpoint(c, async (endpoint) => {
      await changeEndpoint(c.env, endpoint.accountId, endpoint.id, { enabled: true });
      return { notice: "Enabled: new events are sent to it again." };
    }),
  )
  .post("/:id/disable", (c) =>
    onEndpoint(c, async (endpoint) => {
      await changeEndpoint(c.env, endpoint.accountId, endpoint.id, { enabled: false });
      return { notice: "Disabled: nothing is sent to it until you enable it." };
    }),
  )
  .post("/:id/rotate", (c) =>
    onEndpoint(c, async (endpoint) => {
      const rotated = await rotateSecret(c.env, endpoint.accountId, endpoint.id);
      return { secret: rotated.secret, notice: "For 24 hours deliveries carry signatures with both the old and the new secret." };
    }),
  )
  .post("/:id/deliveries/:deliveryId/redeliver", (c) =>
    onEndpoint(c, async (endpoint) => {
      const original = await findEndpointDelivery(c.env.DB, endpoint.id, c.req.param("deliveryId"));
      if (!original) return { errors: ["That delivery is no longer kept."] };
      await redeliver(c.env, endpoint.accountId, endpoint, original);
      return { notice: "The event is on its way again." };
    }),
  )
  .get("/:id/delete", async (c) => {
    const session = sessionOf(c);
    const endpoint = await ownEndpoint(c);
    if (!endpoint) return c.redirect(BASE, 303);
    return c.html(
      <Layout title="Delete webhook endpoint" nonce={c.get("nonce")} session={session} current="webhooks">
        <div class="card">
          <p>
            Delete the endpoint <code>{endpoint.url}</code>? Nothing more is sent to it, pending retries stop, and its delivery
            log is removed. This cannot be undone.
          </p>
          <ConfirmForm action={`${BASE}/${endpoint.id}/delete`} csrfToken={session.csrfToken} confirmLabel="Delete endpoint" cancelHref={`${BASE}/${endpoint.id}`} />
        </div>
      </Layout>,
    );
  })
  .post("/:id/delete", async (c) => {
    const endpoint = await ownEndpoint(c);
    if (endpoint) await deleteEndpoint(c.env.DB, endpoint.accountId, endpoint.id);
    return renderList(c, { notice: endpoint ? `Deleted ${endpoint.url}.` : undefined });
  });
