/**
 * The dashboard's brand settings: the configuration form's brand
 * and language fields, and the logo page (a multipart upload with the same
 * checks as PUT /api/v1/logo).
 */
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_LOGO_BYTES } from "#contract";
import { alertText, csrfTokenIn, ORIGIN, Visitor } from "./dashboard-helpers.ts";
import { makePng, TINY_JPEG } from "./images.ts";

async function signedIn(): Promise<{ visitor: Visitor; token: string; accountId: string }> {
  const visitor = new Visitor();
  const { email } = await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/keys")).text());
  const row = await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first<{ id: string }>();
  return { visitor, token, accountId: row?.id ?? "" };
}

/** What a browser sends for the logo form: multipart, the session cookie, same origin. */
async function uploadLogo(visitor: Visitor, token: string, file: Blob, name = "logo.png"): Promise<Response> {
  const form = new FormData();
  form.set("csrf_token", token);
  form.set("logo", new File([file], name, { type: file.type || "image/png" }));
  return SELF.fetch(`${ORIGIN}/dashboard/logo`, {
    method: "POST",
    headers: { Cookie: [...visitor.cookies].map(([k, v]) => `${k}=${v}`).join("; "), Origin: ORIGIN, "CF-Connecting-IP": visitor.address },
    body: form,
    redirect: "manual",
  });
}

describe("configuration form: brand and language", () => {
  it("shows the brand defaults and saves what is chosen", async () => {
    const { visitor, token, accountId } = await signedIn();
    const page = await (await visitor.get("/dashboard/configs")).text();
    expect(page).toContain('<option value="DejaVu Sans" selected="">DejaVu Sans</option>');
    expect(page).toContain('name="caption_color" type="color" value="#FFFFFF"');
    expect(page).toContain('name="caption_highlight_color" type="color" value="#FFE500"');
    expect(page).toContain('<option value="" selected="">Detect</option>');
    expect(page).toContain('<option value="" selected="">As spoken</option>');
    expect(page).toContain("Upload your logo on the Logo page first");

    const saved = await visitor.post("/dashboard/configs", {
      csrf_token: token,
      name: "brand",
      caption_font: "Noto Sans CJK SC",
      caption_size: "120",
      caption_color: "#00ff00",
      caption_highlight_color: "#ff0000",
      logo_position: "bottom-right",
      logo_size: "25",
      logo_opacity: "0.5",
      hook_title_seconds: "4",
      language: "zh",
      caption_language: "hi",
    });
    expect(saved.status).toBe(200);
    const row = await env.DB.prepare(`SELECT * FROM configs WHERE account_id = ? AND name = 'brand'`).bind(accountId).first<Record<string, unknown>>();
    expect(row).toMatchObject({
      caption_font: "Noto Sans CJK SC",
      caption_size: 120,
      caption_color: "#00ff00",
      caption_highlight_color: "#ff0000",
      caption_outline_color: "#000000",
      logo_position: "bottom-right",
      logo_size: 25,
      logo_opacity: 0.5,
      hook_title_seconds: 4,
      language: "zh",
      caption_language: "hi",
    });
    // The edit form shows the saved values back, and "Detect" clears the language.
    const edit = await (await visitor.get("/dashboard/configs/brand")).text();
    expect(edit).toContain('<option value="Noto Sans CJK SC" selected="">');
    expect(edit).toContain('name="logo_opacity" type="number" inputmode="decimal" min="0.1" max="1" step="0.05" value="0.5"');
    await visitor.post("/dashboard/configs/brand", { csrf_token: token, language: "", caption_language: "" });
    const cleared = await env.DB.prepare(`SELECT language, caption_language FROM configs WHERE account_id = ? AND name = 'brand'`).bind(accountId).first();
    expect(cleared).toEqual({ language: null, caption_language: null });
  });

  it("names each bad brand value next to its field and saves nothing", async () => {
    const { visitor, token, accountId } = await signedIn();
    const res = await visitor.post("/dashboard/configs", { csrf_token: token, name: "bad", caption_color: "#12", caption_font: "Papyrus", caption_language: "tlh" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('<p class="error" id="config-caption_color-error">Enter a colour written #RRGGBB.</p>');
    expect(html).toContain('<p class="error" id="config-caption_font-error">Choose one of the listed options.</p>');
    expect(html).toContain('<p class="error" id="config-caption_language-error">Choose one of the listed options.</p>');
    const count = await env.DB.prepare(`SELECT COUNT(*) AS n FROM configs WHERE account_id = ?`).bind(accountId).first<{ n: number }>();
    expect(count?.n).toBe(0);
  });
});

describe("logo page", () => {
  it("uploads, shows, replaces and deletes the account's logo", async () => {
    const { visitor, token, accountId } = await signedIn();
    expect(await (await visitor.get("/dashboard/logo")).text()).toContain("No logo yet");
    const png = await makePng({ width: 40, height: 20 });
    const uploaded = await uploadLogo(visitor, token, new Blob([png], { type: "image/png" }));
    expect(uploaded.status).toBe(200);
    const html = await uploaded.text();
    expect(html).toContain("Logo uploaded.");
    expect(html).toContain("PNG, 40×20 px");
    const image = await visitor.get(/src="(\/dashboard\/logo\/image[^"]*)"/.exec(html)?.[1] ?? "/missing");
    expect(image.status).toBe(200);
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(png);

    const replaced = await uploadLogo(visitor, token, new Blob([TINY_JPEG], { type: "image/jpeg" }), "logo.jpg");
    expect(await replaced.text()).toContain("Logo replaced.");
    const configs = await (await visitor.get("/dashboard/configs")).text();
    expect(configs).toContain("Your account&#39;s logo (Logo page).");

    await visitor.post("/dashboard/logo/delete", { csrf_token: token });
    expect(await env.DB.prepare(`SELECT * FROM logos WHERE account_id = ?`).bind(accountId).first()).toBeNull();
    expect((await visitor.get("/dashboard/logo/image")).status).toBe(404);
  });

  it("refuses what is not a logo, says why, and keeps the one it had", async () => {
    const { visitor, token, accountId } = await signedIn();
    await uploadLogo(visitor, token, new Blob([TINY_JPEG], { type: "image/jpeg" }));
    const text = await uploadLogo(visitor, token, new Blob(["not an image"], { type: "image/png" }));
    expect(text.status).toBe(400);
    expect(alertText(await text.text())).toBe("The logo must be a PNG or JPEG image (judged by its bytes).");
    const wide = await uploadLogo(visitor, token, new Blob([await makePng({ width: 2000, height: 10 })], { type: "image/png" }));
    expect(alertText(await wide.text())).toContain("at most 1024 pixels");
    const huge = await uploadLogo(visitor, token, new Blob([await makePng({ width: 8, height: 8, padToBytes: MAX_LOGO_BYTES + 64 * 1024 })], { type: "image/png" }));
    expect(huge.status).toBe(413);
    const kept = await env.DB.prepare(`SELECT content_type FROM logos WHERE account_id = ?`).bind(accountId).first();
    expect(kept).toEqual({ content_type: "image/jpeg" });
    // Without the session's token, nothing is stored.
    const forged = await uploadLogo(visitor, "not-the-token", new Blob([await makePng({ width: 8, height: 8 })], { type: "image/png" }));
    expect(forged.status).toBe(403);
  });
});
