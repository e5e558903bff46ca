import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index.ts";
import { describe, expect, it } from "vitest";
import { patternBytes } from "./engine-stub.ts";
import { BASE, expectProblem } from "./helpers.ts";

async function storeObject(size = 1000): Promise<{ key: string; bytes: Uint8Array; etag: string }> {
  const key = `clips/job_cdn${crypto.randomUUID().replaceAll("-", "").slice(0, 17)}/0.mp4`;
  const bytes = patternBytes(size, 7);
  const stored = await env.CLIPS.put(key, bytes, {
    httpMetadata: { contentType: "video/mp4", cacheControl: "public, max-age=31536000, immutable" },
  });
  return { key, bytes, etag: stored!.httpEtag };
}

function cdn(key: string, init: RequestInit = {}): Promise<Response> {
  return SELF.fetch(`${BASE}/cdn/${key}`, init);
}

describe("GET /cdn/*", () => {
  it("serves the object with type, length, validators and a short, revalidated caching", async () => {
    const { key, bytes, etag } = await storeObject();
    const res = await cdn(key);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("video/mp4");
    expect(res.headers.get("Content-Length")).toBe("1000");
    expect(res.headers.get("ETag")).toBe(etag);
    expect(Date.parse(res.headers.get("Last-Modified") ?? "")).not.toBeNaN();
    // Short and revalidated, whatever the object was stored with: a DELETE takes effect within 5 minutes.
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=300, must-revalidate");
    expect(res.headers.get("Accept-Ranges")).toBe("bytes");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });

  it.each([
    ["bytes=0-99", 0, 99],
    ["bytes=900-", 900, 999],
    ["bytes=-100", 900, 999],
    ["bytes=990-5000", 990, 999],
    ["bytes=-5000", 0, 999],
  ])("answers Range %s with 206 and the right bytes", async (range, first, last) => {
    const { key, bytes } = await storeObject();
    const res = await cdn(key, { headers: { Range: range } });
    expect(res.status).toBe(206);
    expect(res.headers.get("Content-Range")).toBe(`bytes ${first}-${last}/1000`);
    expect(res.headers.get("Content-Length")).toBe(String(last - first + 1));
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes.slice(first, last + 1));
  });

  it("answers 416 with Content-Range for a range past the end", async () => {
    const { key } = await storeObject();
    const res = await cdn(key, { headers: { Range: "bytes=1000-" } });
    expect(res.headers.get("Content-Range")).toBe("bytes */1000");
    await expectProblem(res, 416, "range_not_satisfiable");
  });

  it("ignores a malformed Range and serves the whole object", async () => {
    const { key } = await storeObject();
    const res = await cdn(key, { headers: { Range: "frames=1-2" } });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(1000);
  });

  it("answers 304 for a matching If-None-Match and 200 for a stale one", async () => {
    const { key, etag } = await storeObject();
    const fresh = await cdn(key, { headers: { "If-None-Match": etag } });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.get("ETag")).toBe(etag);
    expect(await fresh.text()).toBe("");
    const stale = await cdn(key, { headers: { "If-None-Match": '"something-else"' } });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
  });

  it("answers HEAD with headers and no body", async () => {
    const { key } = await storeObject(321);
    const res = await cdn(key, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Length")).toBe("321");
    expect(res.headers.get("Content-Type")).toBe("video/mp4");
    expect(await res.text()).toBe("");
  });

  it("answers 404 problem for a missing key", async () => {
    await expectProblem(await cdn("clips/job_nothing/0.mp4"), 404, "not_found");
  });

  it("serves the public bucket only: staged uploads, transcripts and direct uploads in the private bucket are 404", async () => {
    const id = crypto.randomUUID().replaceAll("-", "").slice(0, 20);
    const privateKeys = [`staging/job_${id}/0.mp4`, `transcripts/job_${id}.json`, `uploads/upl_${id}`];
    for (const key of privateKeys) await env.UPLOADS.put(key, patternBytes(64, 3));
    for (const key of privateKeys) {
      await expectProblem(await cdn(key), 404, "not_found");
      expect((await cdn(key, { method: "HEAD" })).status).toBe(404);
    }
  });

  it("is not served where CDN_URL is the bucket's own domain (production), nor on another origin", async () => {
    const { key } = await storeObject();
    const production = { ...env, CDN_URL: "https://clips.example.com" };
    for (const [url, bindings] of [
      [`${BASE}/cdn/${key}`, production],
      [`http://other.test/cdn/${key}`, env],
    ] as const) {
      const ctx = createExecutionContext();
      const res = await worker.fetch(new Request(url) as Request<unknown, IncomingRequestCfProperties>, bindings, ctx);
      await waitOnExecutionContext(ctx);
      await expectProblem(res, 404, "not_found");
    }
    expect((await cdn(key)).status).toBe(200);
  });
});
