/** Saved configurations: the API's config_name refers to them by name. */
import { Hono, type Context } from "hono";
import { ConfigName, MAX_CONFIGS_PER_ACCOUNT } from "../../api/configs.ts";
import { findLogo } from "../../db/logos.ts";
import { deleteConfig, getConfig, listConfigs, putConfig, type SavedConfig } from "../../db/configs.ts";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { ConfigForm, valuesOf, type ConfigFormProps } from "../components/config-form.tsx";
import { ConfirmForm, Notice } from "../components/form.tsx";
import { Layout } from "../components/layout.tsx";
import { Time } from "../components/time.tsx";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";
import { configFromForm, FIELDS_NEED_ATTENTION } from "./config-input.ts";

function summary(saved: SavedConfig): string {
  const c = saved.config;
  return `${c.aspect_ratio}, ${c.resolution}p, ${c.min_clip_seconds}-${c.max_clip_seconds} s, up to ${c.max_clips} clip${c.max_clips === 1 ? "" : "s"}, ${c.reframe} reframing${c.layout === "single" ? "" : `, ${c.layout} layout`}`;
}

function ConfigList({ configs }: { configs: SavedConfig[] }) {
  if (configs.length === 0) return <p>No saved configurations yet. Jobs without one use the defaults.</p>;
  return (
    <div class="table-wrap">
      <table class="stack">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Settings</th>
            <th scope="col">Updated</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {configs.map((saved) => (
            <tr data-config={saved.name}>
              <td data-label="Name">
                <code>{saved.name}</code>
              </td>
              <td data-label="Settings">{summary(saved)}</td>
              <td data-label="Updated">
                <Time iso={saved.updatedAt} />
              </td>
              <td data-label="Actions">
                <a href={`/dashboard/configs/${saved.name}`} aria-label={`Edit ${saved.name}`}>
                  Edit
                </a>{" "}
                ·{" "}
                <a href={`/dashboard/configs/${saved.name}/delete`} aria-label={`Delete ${saved.name}`}>
                  Delete…
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type FormState = Omit<ConfigFormProps, "csrf" | "name">;
const EMPTY_FORM: FormState = { values: valuesOf(DEFAULT_CLIP_CONFIG), errors: {}, general: [] };

async function renderList(c: Context<DashboardEnv>, form: FormState, notice?: string, status: 200 | 400 | 409 = 200) {
  const session = sessionOf(c);
  const [configs, hasLogo] = await Promise.all([listConfigs(c.env.DB, session.accountId), findLogo(c.env.DB, session.accountId).then(Boolean)]);
  return c.html(
    <Layout title="Configurations" nonce={c.get("nonce")} session={session} current="configs">
      {notice ? <Notice>{notice}</Notice> : null}
      <section aria-labelledby="saved-heading">
        <h2 id="saved-heading">Saved configurations</h2>
        <p>
          Brand settings (caption font and colours, logo, hook title) and languages are part of each configuration. Your account's logo is
          on the <a href="/dashboard/logo">Logo page</a>.
        </p>
        <ConfigList configs={configs} />
      </section>
      <section class="card" aria-labelledby="new-heading">
        <h2 id="new-heading">New configuration</h2>
        <ConfigForm name={null} csrf={session.csrfToken} hasLogo={hasLogo} {...form} />
      </section>
    </Layout>,
    status,
  );
}

async function renderEdit(c: Context<DashboardEnv>, name: string, form: FormState, status: 200 | 400 = 200) {
  const session = sessionOf(c);
  const hasLogo = Boolean(await findLogo(c.env.DB, session.accountId));
  return c.html(
    <Layout title={`Edit “${name}”`} nonce={c.get("nonce")} session={session} current="configs">
      <div class="card">
        <ConfigForm name={name} csrf={session.csrfToken} hasLogo={hasLogo} {...form} />
      </div>
    </Layout>,
    status,
  );
}

function nameParam(c: Context<DashboardEnv>): string | null {
  const parsed = ConfigName.safeParse(c.req.param("name"));
  return parsed.success ? parsed.data : null;
}

export const configPages = new Hono<DashboardEnv>()
  .get("/", (c) => renderList(c, EMPTY_FORM))
  .post("/", async (c) => {
    const { accountId } = sessionOf(c);
    const body = await c.req.parseBody();
    const typedName = typeof body.name === "string" ? body.name.trim() : "";
    const input = configFromForm(body);
    const name = ConfigName.safeParse(typedName);
    const errors = input.ok ? {} : { ...input.errors };
    if (!name.success) errors.name = name.error.issues[0]?.message ?? "Invalid name.";
    if (!input.ok || !name.success) {
      const values = input.ok ? valuesOf(input.config) : input.values;
      const general = input.ok ? [FIELDS_NEED_ATTENTION] : input.general;
      return renderList(c, { values, errors, general, typedName }, undefined, 400);
    }
    if (await getConfig(c.env.DB, accountId, name.data)) {
      return renderList(c, { values: valuesOf(input.config), errors: { name: "A configuration with this name already exists." }, general: [], typedName }, undefined, 409);
    }
    const saved = await putConfig(c.env.DB, accountId, name.data, input.config, MAX_CONFIGS_PER_ACCOUNT);
    if (saved.limitReached) {
      return renderList(c, { ...EMPTY_FORM, general: [`An account can save at most ${MAX_CONFIGS_PER_ACCOUNT} configurations.`] }, undefined, 409);
    }
    return renderList(c, EMPTY_FORM, `Configuration “${name.data}” saved.`);
  })
  .get("/:name", async (c) => {
    const name = nameParam(c);
    const saved = name ? await getConfig(c.env.DB, sessionOf(c).accountId, name) : null;
    if (!name || !saved) return c.redirect("/dashboard/configs", 303);
    return renderEdit(c, name, { values: valuesOf(saved.config), errors: {}, general: [] });
  })
  .post("/:name", async (c) => {
    const { accountId } = sessionOf(c);
    const name = nameParam(c);
    if (!name || !(await getConfig(c.env.DB, accountId, name))) return c.redirect("/dashboard/configs", 303);
    const input = configFromForm(await c.req.parseBody());
    if (!input.ok) return renderEdit(c, name, input, 400);
    // An existing name: replaced, whatever the count.
    await putConfig(c.env.DB, accountId, name, input.config, MAX_CONFIGS_PER_ACCOUNT);
    return renderList(c, EMPTY_FORM, `Configuration “${name}” saved.`);
  })
  .get("/:name/delete", async (c) => {
    const session = sessionOf(c);
    const name = nameParam(c);
    if (!name || !(await getConfig(c.env.DB, session.accountId, name))) return c.redirect("/dashboard/configs", 303);
    return c.html(
      <Layout title="Delete configuration" nonce={c.get("nonce")} session={session} current="configs">
        <div class="card">
          <p>
            Delete <code>{name}</code>? API requests naming it will answer <code>config_not_found</code>. Jobs already
            submitted keep their settings.
          </p>
          <ConfirmForm
            action={`/dashboard/configs/${name}/delete`}
            csrfToken={session.csrfToken}
            confirmLabel="Delete configuration"
            cancelHref="/dashboard/configs"
          />
        </div>
      </Layout>,
    );
  })
  .post("/:name/delete", async (c) => {
    const name = nameParam(c);
    if (name) await deleteConfig(c.env.DB, sessionOf(c).accountId, name);
    return renderList(c, EMPTY_FORM, name ? `Configuration “${name}” deleted.` : undefined);
  });
