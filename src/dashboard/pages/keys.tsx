/** API keys: create (shown once), list, revoke with a confirmation step. */
import { Hono, type Context } from "hono";
import { z } from "zod";
import { getApiKey, listApiKeys, type ApiKeyRecord } from "../../db/api-keys.ts";
import { issueApiKey } from "../../keys/issue.ts";
import { revokeKey } from "../../keys/revoke.ts";
import { COPY_SCRIPT } from "../assets/scripts.ts";
import { Alert, ConfirmForm, CsrfField, Field, Notice } from "../components/form.tsx";
import { Layout } from "../components/layout.tsx";
import { Time } from "../components/time.tsx";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";

/** Keeps the list a person can review; revoked keys do not count. */
export const MAX_ACTIVE_KEYS = 20;
const KeyName = z.string().trim().min(1, "Give the key a name.").max(100, "The name can have at most 100 characters.");

function KeyList({ keys }: { keys: ApiKeyRecord[] }) {
  if (keys.length === 0) return <p>No keys yet.</p>;
  return (
    <div class="table-wrap">
      <p class="hint">Keys are shown by their prefix and last four characters only.</p>
      <table class="stack">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr data-key-id={key.id}>
              <td data-label="Name">{key.name}</td>
              <td data-label="Key">
                <code>
                  {key.prefix}…{key.last4}
                </code>
              </td>
              <td data-label="Created">
                <Time iso={key.createdAt} />
              </td>
              <td data-label="Last used">
                <Time iso={key.lastUsedAt} />
              </td>
              <td data-label="Status">
                {key.revokedAt ? (
                  <>
                    Revoked <Time iso={key.revokedAt} />
                  </>
                ) : (
                  <a href={`/dashboard/keys/${key.id}/revoke`} aria-label={`Revoke key ${key.name}`}>
                    Revoke…
                  </a>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NewKeySecret({ secret, name }: { secret: string; name: string }) {
  return (
    <Notice>
      <h2>Your new key “{name}”</h2>
      <p>
        <strong>Copy it now and store it somewhere safe: it will not be shown again.</strong> Send it as{" "}
        <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
      <div class="secret">
        <code id="new-key">{secret}</code>
        <button type="button" class="secondary" data-copy="new-key" aria-describedby="copy-status" hidden>
          Copy key
        </button>
      </div>
      <p id="copy-status" role="status" class="hint"></p>
    </Notice>
  );
}

interface KeysPageProps {
  created?: { secret: string; name: string };
  errors?: string[];
  revoked?: string;
}

async function renderKeysPage(c: Context<DashboardEnv>, props: KeysPageProps, status: 200 | 400 | 409 = 200) {
  const session = sessionOf(c);
  const keys = await listApiKeys(c.env.DB, session.accountId);
  return c.html(
    <Layout title="API keys" nonce={c.get("nonce")} session={session} current="keys" scripts={props.created ? [COPY_SCRIPT] : []}>
      {props.created ? <NewKeySecret {...props.created} /> : null}
      {props.revoked ? <Notice>Key “{props.revoked}” is revoked: API requests with it are refused from now on.</Notice> : null}
      <section class="card" aria-labelledby="create-heading">
        <h2 id="create-heading">Create a key</h2>
        <Alert messages={props.errors ?? []} />
        <form method="post" action="/dashboard/keys">
          <CsrfField token={session.csrfToken} />
          <Field id="key-name" label="Name" hint="Where the key will be used, e.g. “production server”.">
            {(describedBy) => <input id="key-name" name="name" required maxlength={100} aria-describedby={describedBy} />}
          </Field>
          <div class="actions">
            <button type="submit">Create key</button>
          </div>
        </form>
      </section>
      <section aria-labelledby="list-heading">
        <h2 id="list-heading">Your keys</h2>
        <KeyList keys={keys} />
      </section>
    </Layout>,
    status,
  );
}

async function ownKey(c: Context<DashboardEnv>): Promise<ApiKeyRecord | null> {
  const key = await getApiKey(c.env.DB, c.req.param("id") ?? "");
  return key && key.accountId === sessionOf(c).accountId ? key : null;
}

export const keysPages = new Hono<DashboardEnv>()
  .get("/", (c) => renderKeysPage(c, {}))
  .post("/", async (c) => {
    const { accountId } = sessionOf(c);
    const body = await c.req.parseBody();
    const name = KeyName.safeParse(typeof body.name === "string" ? body.name : "");
    if (!name.success) return renderKeysPage(c, { errors: name.error.issues.map((i) => i.message) }, 400);
    // The limit is checked by the insert itself: concurrent creations cannot pass it together.
    const issued = await issueApiKey(c.env.DB, accountId, name.data, new Date(), MAX_ACTIVE_KEYS);
    if (!issued) {
      return renderKeysPage(c, { errors: [`An account can have at most ${MAX_ACTIVE_KEYS} active keys: revoke one first.`] }, 409);
    }
    return renderKeysPage(c, { created: { secret: issued.secret, name: issued.key.name } });
  })
  .get("/:id/revoke", async (c) => {
    const session = sessionOf(c);
    const key = await ownKey(c);
    if (!key || key.revokedAt) return c.redirect("/dashboard/keys", 303);
    return c.html(
      <Layout title="Revoke API key" nonce={c.get("nonce")} session={session} current="keys">
        <div class="card">
          <p>
            Revoke <strong>{key.name}</strong> (
            <code>
              {key.prefix}…{key.last4}
            </code>
            )? Every API request that uses it will be refused from the next one on. This cannot be undone.
          </p>
          <ConfirmForm
            action={`/dashboard/keys/${key.id}/revoke`}
            csrfToken={session.csrfToken}
            confirmLabel="Revoke key"
            cancelHref="/dashboard/keys"
          />
        </div>
      </Layout>,
    );
  })
  .post("/:id/revoke", async (c) => {
    const key = await ownKey(c);
    if (!key) return c.redirect("/dashboard/keys", 303);
    await revokeKey(c.env, key.id);
    return renderKeysPage(c, { revoked: key.name });
  });
