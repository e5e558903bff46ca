/**
 * The dashboard's tus endpoint: the signed-in session instead of an API key,
 * same origin only, the session's CSRF token on every write; then the jobs
 * form submits the upload like the API does.
 */
import { SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { FakeEngine } from "./engine-stub.ts";
import { expectProblem } from "./helpers.ts";
import { csrfTokenIn, ORIGIN, Visitor } from "./dashboard-helpers.ts";
import { bytesOf, metadataHeader, TUS } from "./uploads-helpers.ts";

async function signedIn(): Promise<{ visitor: Visitor; csrf: string; cookie: string }> {
  const visitor = new Visitor();
  await visitor.signUp();
  const page = await visitor.get("/dashboard/jobs");
  const html = await page.text();
  expect(html).toContain("data-upload-zone");
  const cookie = [...visitor.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  return { visitor, csrf: csrfTokenIn(html), cookie };
}

function tus(path: string, init: { method: string; cookie?: string; csrf?: string; origin?: string; headers?: Record<string, string>; body?: BodyInit }) {
  return SELF.fetch(`${ORIGIN}${path}`, {
    method: init.method,
    headers: {
      ...TUS,
      ...(init.cookie ? { Cookie: init.cookie } : {}),
      ...(init.csrf ? { "X-CSRF-Token": init.csrf } : {}),
      Origin: init.origin ?? ORIGIN,
      ...init.headers,
    },
    body: init.body,
  });
}

// The queue may deliver the job made below: the fake engine answers it.
beforeEach(() => new FakeEngine().install());

describe("/dashboard/uploads", () => {
  it("refuses a visitor without a session, a write without the CSRF token, and another site", async () => {
    const { cookie, csrf } = await signedIn();
    const create = { "Upload-Length": "10" };
    await expectProblem(await tus("/dashboard/uploads", { method: "POST", headers: create }), 401, "unauthorized");
    await expectProblem(await tus("/dashboard/uploads", { method: "POST", cookie, headers: create }), 401, "unauthorized");
    await expectProblem(await tus("/dashboard/uploads", { method: "POST", cookie, csrf: "x".repeat(43), headers: create }), 401, "unauthorized");
    await expectProblem(
      await tus("/dashboard/uploads", { method: "POST", cookie, csrf, origin: "https://evil.example", headers: create }),
      401,
      "unauthorized",
    );
    const options = await SELF.fetch(`${ORIGIN}/dashboard/uploads`, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("Tus-Version")).toBe("1.0.0");
  });

  it("uploads with the session, and the jobs form submits the upload; the job is titled with the file name", async () => {
    const { visitor, cookie, csrf } = await signedIn();
    const data = bytesOf(30_000, 21);
    const created = await tus("/dashboard/uploads", {
      method: "POST",
      cookie,
      csrf,
      headers: { "Upload-Length": String(data.byteLength), "Upload-Metadata": metadataHeader({ filename: "dropped clip.mov" }) },
    });
    expect(created.status).toBe(201);
    const location = created.headers.get("Location")!;
    expect(location).toMatch(/^\/dashboard\/uploads\/upl_[A-Za-z0-9]+$/);
    const patched = await tus(location, {
      method: "PATCH",
      cookie,
      csrf,
      headers: { "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream" },
      body: data,
    });
    expect(patched.status).toBe(204);
    expect(patched.headers.get("Upload-Offset")).toBe(String(data.byteLength));
    const head = await tus(location, { method: "HEAD", cookie });
    expect(head.headers.get("Upload-Offset")).toBe(String(data.byteLength));

    const uploadId = location.split("/").pop()!;
    const both = await visitor.submit("/dashboard/jobs", "/dashboard/jobs", { video_url: "https://videos.example.com/a.mp4", upload_id: uploadId, video_type: "vlog", config_name: "" });
    expect(both.status).toBe(400);
    const res = await visitor.submit("/dashboard/jobs", "/dashboard/jobs", { video_url: "", upload_id: uploadId, video_type: "vlog", config_name: "" });
    expect(res.status).toBe(303);
    const jobId = /queued=(job_[A-Za-z0-9]+)/.exec(res.headers.get("Location") ?? "")![1]!;
    const status = await visitor.get(`/dashboard/jobs/${jobId}/status.json`);
    expect(await status.json()).toMatchObject({ job_id: jobId, upload_id: uploadId, video_url: null, title: "dropped clip.mov" });
  });
});
