/**
 * Brand and language settings through the public API: saved
 * configurations with caption font/size/colours, logo placement and hook
 * title; their documented 400s; the account's logo (stored privately,
 * validated by its bytes); and `language` / `caption_language` on
 * submission, down to the StartJob the engine receives.
 */
import { env, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { CAPTION_FONTS, DEFAULT_CLIP_CONFIG, MAX_LOGO_BYTES } from "#contract";
import { FakeEngine } from "./engine-stub.ts";
import { api, BASE, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { makePng, TINY_JPEG } from "./images.ts";
import { getJob, startJob, submit, VIDEO_URL } from "./jobs-helpers.ts";

function putConfig(account: TestAccount, name: string, body: unknown) {
  return api(account, `/api/v1/configs/${name}`, { method: "PUT", body: JSON.stringify(body) });
}

function putLogo(account: TestAccount, bytes: Uint8Array, contentType = "image/png") {
  return api(account, "/api/v1/logo", { method: "PUT", body: bytes, headers: { "Content-Type": contentType } });
}

const BRAND = {
  caption_font: "Noto Serif",
  caption_size: 130,
  caption_color: "#00FF00",
  caption_highlight_color: "#ff00ff",
  caption_outline_color: "#102030",
  caption_box_color: "#FFFFFF",
  logo_position: "top-right",
  logo_size: 20,
  logo_opacity: 0.6,
  hook_title_seconds: 3,
  language: "es",
  caption_language: "ja",
};

describe("brand settings in saved configurations", () => {
  it("stores every brand and language field, and defaults the ones left out", async () => {
    const account = await createAccount();
    const created = await putConfig(account, "brand", BRAND);
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ name: "brand", ...BRAND });
    expect(await (await api(account, "/api/v1/configs/brand")).json()).toMatchObject(BRAND);

    const plain = await (await putConfig(account, "plain", { max_clips: 2 })).json<Record<string, unknown>>();
    expect(plain).toMatchObject({
      caption_font: "DejaVu Sans",
      caption_size: 100,
      caption_color: "#FFFFFF",
      caption_highlight_color: "#FFE500",
      caption_outline_color: "#000000",
      caption_box_color: "#000000",
      logo_position: "off",
      logo_size: 15,
      logo_opacity: 1,
      hook_title_seconds: 0,
      language: null,
      caption_language: null,
    });
    expect(plain).toMatchObject({ ...DEFAULT_CLIP_CONFIG, max_clips: 2 });
  });

  it("answers each bad value with its own documented code", async () => {
    const account = await createAccount();
    const font = await expectProblem(await putConfig(account, "x", { caption_font: "Comic Sans MS" }), 400, "unknown_font");
    expect(font.errors?.map((e) => e.path)).toEqual(["caption_font"]);
    expect(font.allowed_values).toEqual([...CAPTION_FONTS]);

    for (const colour of ["red", "#FFF", "#GGGGGG", "FFE500", "#FFE5001", 16777215]) {
      const problem = await expectProblem(await putConfig(account, "x", { caption_color: colour }), 400, "invalid_color");
      expect(problem.errors?.map((e) => e.path)).toEqual(["caption_color"]);
    }
    const twoColours = await expectProblem(await putConfig(account, "x", { caption_highlight_color: "yellow", caption_box_color: "#12345" }), 400, "invalid_color");
    expect(twoColours.errors?.map((e) => e.path).sort()).toEqual(["caption_box_color", "caption_highlight_color"]);

    const spoken = await expectProblem(await putConfig(account, "x", { language: "xx" }), 400, "unsupported_language");
    expect(spoken.allowed_values).toContain("en");
    // Not a language the speech model knows, though the translation model does.
    await expectProblem(await putConfig(account, "x", { language: "zu" }), 400, "unsupported_language");
    const target = await expectProblem(await putConfig(account, "x", { caption_language: "english" }), 400, "unsupported_language");
    expect(target.allowed_values).toContain("zu");

    // Problems of several kinds stay invalid_request, each listed.
    const mixed = await expectProblem(await putConfig(account, "x", { caption_color: "red", max_clips: 0 }), 400, "invalid_request");
    expect(mixed.errors?.map((e) => e.path).sort()).toEqual(["caption_color", "max_clips"]);
    for (const [field, value] of [["caption_size", 49], ["caption_size", 201], ["logo_size", 51], ["logo_opacity", 0], ["hook_title_seconds", 11], ["logo_position", "middle"]] as const) {
      const problem = await expectProblem(await putConfig(account, "x", { [field]: value }), 400, "invalid_request");
      expect(problem.errors?.map((e) => e.path)).toEqual([field]);
    }
    await expectProblem(await api(account, "/api/v1/configs/x"), 404, "not_found");
  });

  it("lists the new codes in the OpenAPI document and /docs/errors", async () => {
    const doc = await (await SELF.fetch(`${BASE}/api/v1/openapi.json`)).json<{ paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>> }>();
    const configErrors = doc.paths["/api/v1/configs/{name}"]!.put!.responses["400"]!.description ?? "";
    for (const code of ["unknown_font", "invalid_color", "unsupported_language"]) expect(configErrors).toContain(code);
    const logoResponses = doc.paths["/api/v1/logo"]!.put!.responses;
    expect(logoResponses["400"]!.description).toContain("invalid_logo");
    expect(logoResponses["413"]!.description).toContain("logo_too_large");
    expect(doc.paths["/api/v1/jobs"]!.post!.responses["422"]!.description).toContain("logo_not_uploaded");
    const docs = await (await SELF.fetch(`${BASE}/docs/errors`)).text();
    for (const code of ["unknown_font", "invalid_color", "unsupported_language", "invalid_logo", "logo_too_large", "logo_not_uploaded"]) {
      expect(docs).toContain(code);
    }
  });
});

describe("the account's logo", () => {
  it("stores a PNG privately and serves it back only with the key", async () => {
    const account = await createAccount();
    await expectProblem(await api(account, "/api/v1/logo"), 404, "not_found");
    const png = await makePng({ width: 64, height: 32 });
    const created = await putLogo(account, png);
    expect(created.status).toBe(201);
    const logo = await created.json<{ content_type: string; width: number; height: number; size_bytes: number; sha256: string }>();
    expect(logo).toMatchObject({ content_type: "image/png", width: 64, height: 32, size_bytes: png.byteLength });
    expect(await (await api(account, "/api/v1/logo")).json()).toMatchObject(logo);

    const image = await api(account, "/api/v1/logo/image");
    expect(image.status).toBe(200);
    expect(image.headers.get("Content-Type")).toBe("image/png");
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(png);
    // Never in the bucket served on {cdn_url}, and not reachable there or by another account.
    expect((await env.CLIPS.list({ prefix: "logos/" })).objects).toHaveLength(0);
    const stored = (await env.UPLOADS.list({ prefix: `logos/${account.accountId}/` })).objects.map((o) => o.key);
    expect(stored).toEqual([expect.stringMatching(new RegExp(`^logos/${account.accountId}/${logo.sha256}-[0-9a-f]{16}$`))]);
    expect((await SELF.fetch(`${BASE}/cdn/${stored[0]}`)).status).toBe(404);
    await expectProblem(await api(await createAccount(), "/api/v1/logo/image"), 404, "not_found");
    expect((await SELF.fetch(`${BASE}/api/v1/logo/image`)).status).toBe(401);
  });

  it("replaces (200) and deletes, leaving no stray object", async () => {
    const account = await createAccount();
    expect((await putLogo(account, await makePng({ width: 8, height: 8 }))).status).toBe(201);
    const replaced = await putLogo(account, TINY_JPEG, "image/jpeg");
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toMatchObject({ content_type: "image/jpeg", width: 16, height: 12 });
    expect((await env.UPLOADS.list({ prefix: `logos/${account.accountId}/` })).objects).toHaveLength(1);
    expect((await api(account, "/api/v1/logo", { method: "DELETE" })).status).toBe(204);
    expect((await env.UPLOADS.list({ prefix: `logos/${account.accountId}/` })).objects).toHaveLength(0);
    await expectProblem(await api(account, "/api/v1/logo", { method: "DELETE" }), 404, "not_found");
  });

  it("judges the image by its bytes and refuses what the engine could not draw", async () => {
    const account = await createAccount();
    // A PNG labelled JPEG is still a PNG; bytes labelled as bytes are fine too.
    expect(await (await putLogo(account, await makePng({ width: 4, height: 4 }), "image/jpeg")).json()).toMatchObject({ content_type: "image/png" });
    expect((await putLogo(account, TINY_JPEG, "application/octet-stream")).status).toBe(200);

    const refused: [string, Uint8Array][] = [
      ["text", new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'/>")],
      ["GIF", new TextEncoder().encode("GIF89a\x01\x00\x01\x00\x00\x00\x00;")],
      ["truncated PNG", await makePng({ width: 32, height: 32, truncate: 20 })],
      ["PNG with rows missing", await makePng({ width: 32, height: 32, missingRows: 5 })],
      ["PNG with a bad CRC", await makePng({ width: 32, height: 32, badCrc: true })],
      ["PNG over 1024 px", await makePng({ width: 1025, height: 4 })],
      ["truncated JPEG", TINY_JPEG.slice(0, TINY_JPEG.length - 40)],
      ["JPEG without its end", TINY_JPEG.slice(0, TINY_JPEG.length - 2)],
      ["empty", new Uint8Array(0)],
    ];
    for (const [what, bytes] of refused) {
      const problem = await expectProblem(await putLogo(account, bytes), 400, "invalid_logo");
      expect(problem.detail, what).not.toBe("");
    }
    // The logo that was stored before is untouched by every refusal.
    expect(await (await api(account, "/api/v1/logo")).json()).toMatchObject({ content_type: "image/jpeg" });

    const big = await makePng({ width: 16, height: 16, padToBytes: MAX_LOGO_BYTES + 10 });
    expect(big.byteLength).toBeGreaterThan(MAX_LOGO_BYTES);
    await expectProblem(await putLogo(account, big), 413, "logo_too_large");
    // A body without a declared length is counted as it arrives.
    const streamed = new Request(`${BASE}/api/v1/logo`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "image/png" },
      body: new Blob([big]).stream(),
      duplex: "half",
    } as RequestInit);
    await expectProblem(await SELF.fetch(streamed), 413, "logo_too_large");
    const atLimit = await makePng({ width: 16, height: 16, padToBytes: MAX_LOGO_BYTES });
    expect(atLimit.byteLength).toBeLessThanOrEqual(MAX_LOGO_BYTES);
    expect((await putLogo(account, atLimit)).status).toBe(200);
    await expectProblem(await putLogo(account, await makePng({ width: 4, height: 4 }), "text/plain"), 415, "unsupported_media_type");
  });
});

describe("brand and language on submission", () => {
  let engine: FakeEngine;
  beforeEach(() => {
    engine = new FakeEngine();
    engine.install();
  });

  it("refuses a configuration that places a logo the account has not uploaded (422)", async () => {
    const account = await createAccount();
    expect((await putConfig(account, "logo", { logo_position: "bottom-left" })).status).toBe(201);
    await expectProblem(await submit(account, { video_url: VIDEO_URL, video_type: "vlog", config_name: "logo" }), 422, "logo_not_uploaded");
    expect((await putLogo(account, await makePng({ width: 8, height: 8 }))).status).toBe(201);
    expect((await submit(account, { video_url: VIDEO_URL, video_type: "vlog", config_name: "logo" })).status).toBe(201);
  });

  it("sends the configuration's brand settings and the submission's languages to the engine", async () => {
    const account = await createAccount("unmetered");
    expect((await putLogo(account, await makePng({ width: 8, height: 8 }))).status).toBe(201);
    expect((await putConfig(account, "brand", BRAND)).status).toBe(201);
    const client = await startJob(account, engine, { video_url: VIDEO_URL, video_type: "podcast", config_name: "brand", caption_language: "ar" });
    expect(engine.starts(client.jobId).at(-1)?.config).toMatchObject({ ...BRAND, language: "es", caption_language: "ar" });
    const job = await getJob(account, client.jobId);
    expect(job).toMatchObject({ language_hint: "es", caption_language: "ar" });

    // null clears the configuration's value for this job (another account: one active job each).
    const second = await createAccount("unmetered");
    expect((await putLogo(second, await makePng({ width: 8, height: 8 }))).status).toBe(201);
    expect((await putConfig(second, "brand", BRAND)).status).toBe(201);
    const cleared = await startJob(second, engine, { video_url: VIDEO_URL, video_type: "podcast", config_name: "brand", language: null, caption_language: null });
    expect(engine.starts(cleared.jobId).at(-1)?.config).toMatchObject({ language: null, caption_language: null, caption_font: "Noto Serif" });
  });

  it("refuses an unsupported language on submission", async () => {
    const account = await createAccount();
    const problem = await expectProblem(await submit(account, { video_url: VIDEO_URL, video_type: "podcast", caption_language: "klingon" }), 400, "unsupported_language");
    expect(problem.errors?.map((e) => e.path)).toEqual(["caption_language"]);
    await expectProblem(await submit(account, { video_url: VIDEO_URL, video_type: "podcast", language: "EN" }), 400, "unsupported_language");
  });
});
