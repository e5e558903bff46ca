/**
 * The account's logo: see it, upload or replace it, delete it.
 * Same rules as PUT /api/v1/logo (src/logos/service.ts); the form is
 * multipart, so its route has a larger body limit than the other forms
 * (LOGO_FORM_BYTES in ../index.tsx).
 */
import { Hono, type Context } from "hono";
import { MAX_LOGO_BYTES, MAX_LOGO_PIXELS } from "#contract";
import { findLogo, type Logo } from "../../db/logos.ts";
import { AppError } from "../../http/errors.ts";
import { DomainError } from "../../domain/errors.ts";
import { readLogo, removeLogo, storeLogo } from "../../logos/service.ts";
import { Alert, ConfirmForm, CsrfField, Notice } from "../components/form.tsx";
import { Layout } from "../components/layout.tsx";
import { Time } from "../components/time.tsx";
import type { DashboardEnv } from "../env.ts";
import { sessionOf } from "../security/session.ts";

export const LOGO_PAGE_PATH = "/dashboard/logo";
/** The multipart form around a 1 MiB image: the image, the CSRF field and the part headers. */
export const LOGO_FORM_BYTES = MAX_LOGO_BYTES + 16 * 1024;

function Current({ logo }: { logo: Logo | null }) {
  if (!logo) return <p>No logo yet. Configurations with a logo position need one before jobs can use them.</p>;
  return (
    <figure class="logo-preview">
      <img src={`${LOGO_PAGE_PATH}/image?v=${logo.sha256.slice(0, 12)}`} alt="Your logo" width={Math.min(logo.width, 240)} />
      <figcaption>
        {logo.contentType === "image/png" ? "PNG" : "JPEG"}, {logo.width}×{logo.height} px, {Math.ceil(logo.sizeBytes / 1024)} KiB, uploaded{" "}
        <Time iso={logo.updatedAt} />.
      </figcaption>
    </figure>
  );
}

async function renderPage(c: Context<DashboardEnv>, messages: { notice?: string; problems?: string[] } = {}, status: 200 | 400 | 413 = 200) {
  const session = sessionOf(c);
  const logo = await findLogo(c.env.DB, session.accountId);
  return c.html(
    <Layout title="Logo" nonce={c.get("nonce")} session={session} current="configs">
      {messages.notice ? <Notice>{messages.notice}</Notice> : null}
      <Alert messages={messages.problems ?? []} />
      <section class="card" aria-labelledby="logo-heading">
        <h2 id="logo-heading">Your logo</h2>
        <Current logo={logo} />
        {logo ? (
          <p>
            <a href={`${LOGO_PAGE_PATH}/delete`}>Delete the logo…</a>
          </p>
        ) : null}
      </section>
      <section class="card" aria-labelledby="upload-heading">
        <h2 id="upload-heading">{logo ? "Replace it" : "Upload one"}</h2>
        <form method="post" action={LOGO_PAGE_PATH} enctype="multipart/form-data">
          <CsrfField token={session.csrfToken} />
          <label for="logo-file">
            Image
            <span class="hint" id="logo-file-hint">
              PNG or JPEG, at most 1 MiB and {MAX_LOGO_PIXELS} pixels on each side. A transparent PNG looks best. Place it on clips
              in a configuration (Logo, width, opacity).
            </span>
          </label>
          <input id="logo-file" name="logo" type="file" accept="image/png,image/jpeg" required aria-describedby="logo-file-hint" />
          <div class="actions">
            <button type="submit">Upload logo</button>
          </div>
        </form>
      </section>
    </Layout>,
    status,
  );
}

export const logoPages = new Hono<DashboardEnv>()
  .get("/", (c) => renderPage(c))
  .post("/", async (c) => {
    const body = await c.req.parseBody();
    const file = body.logo;
    if (!(file instanceof File) || file.size === 0) return renderPage(c, { problems: ["Choose an image file to upload."] }, 400);
    if (file.size > MAX_LOGO_BYTES) return renderPage(c, { problems: ["The image is larger than 1 MiB."] }, 413);
    try {
      const { created } = await storeLogo(c.env, sessionOf(c).accountId, new Uint8Array(await file.arrayBuffer()));
      return renderPage(c, { notice: created ? "Logo uploaded." : "Logo replaced." });
    } catch (err) {
      if (err instanceof DomainError && (err.code === "invalid_logo" || err.code === "logo_too_large")) {
        return renderPage(c, { problems: [err.message] }, err.code === "logo_too_large" ? 413 : 400);
      }
      throw err;
    }
  })
  .get("/image", async (c) => {
    const found = await readLogo(c.env, sessionOf(c).accountId);
    if (!found) return c.text("No logo.", 404);
    return c.body(found.body, 200, { "Content-Type": found.contentType, "Cache-Control": "private, no-store" });
  })
  .get("/delete", async (c) => {
    const session = sessionOf(c);
    if (!(await findLogo(c.env.DB, session.accountId))) return c.redirect(LOGO_PAGE_PATH, 303);
    return c.html(
      <Layout title="Delete logo" nonce={c.get("nonce")} session={session} current="configs">
        <div class="card">
          <p>Delete your logo? Jobs submitted afterwards with a configuration that places a logo are refused until you upload another.</p>
          <ConfirmForm action={`${LOGO_PAGE_PATH}/delete`} csrfToken={session.csrfToken} confirmLabel="Delete logo" cancelHref={LOGO_PAGE_PATH} />
        </div>
      </Layout>,
    );
  })
  .post("/delete", async (c) => {
    const deleted = await removeLogo(c.env, sessionOf(c).accountId);
    return renderPage(c, { notice: deleted ? "Logo deleted." : undefined });
  });
