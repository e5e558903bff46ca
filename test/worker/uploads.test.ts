/**
 * tus uploads on the real Worker (D1, R2 multipart, the UploadState Durable
 * Object in miniflare): creation, chunked PATCHes that do not line up with
 * R2's part size, every documented refusal, expiry by the alarm, termination,
 * and that nothing partial is left in R2 afterwards.
 */
import { env, runDurableObjectAlarm, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { uploadKey } from "../../src/uploads/ids.ts";
import { MAX_PATCH_BYTES, MIN_PART_BYTES } from "../../src/uploads/limits.ts";
import { api, BASE, createAccount, expectProblem } from "./helpers.ts";
import {
  backdateExpiry,
  bytesOf,
  createUpload,
  head,
  isReceiving,
  metadataHeader,
  multipartGone,
  patch,
  storedKeys,
  TUS,
  uploadAll,
  uploadInternals,
  uploadStub,
} from "./uploads-helpers.ts";

const MiB = 1024 * 1024;

async function sha256(data: ArrayBuffer | Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("tus discovery", () => {
  it("OPTIONS answers 204 without a key, with version, extensions and max size", async () => {
    for (const path of ["/api/v1/uploads", "/api/v1/uploads/upl_whatever"]) {
      const res = await SELF.fetch(`${BASE}${path}`, { method: "OPTIONS" });
      expect(res.status).toBe(204);
      expect(res.headers.get("Tus-Version")).toBe("1.0.0");
      expect(res.headers.get("Tus-Extension")).toBe("creation,termination,expiration");
      expect(Number(res.headers.get("Tus-Max-Size"))).toBe(Number(env.MAX_SOURCE_BYTES));
    }
  });

  it("every other method needs a key", async () => {
    const res = await SELF.fetch(`${BASE}/api/v1/uploads`, { method: "POST", headers: { ...TUS, "Upload-Length": "10" } });
    await expectProblem(res, 401, "unauthorized");
  });
});

describe("an upload in chunks that do not line up with R2 parts", { timeout: 60_000 }, () => {
  it("stores exactly the bytes sent, reports every offset, and completes into one object", async () => {
    const account = await createAccount();
    const data = bytesOf(MIN_PART_BYTES + 3 * MiB + 17, 7);
    const res = await api(account, "/api/v1/uploads", {
      method: "POST",
      headers: { ...TUS, "Upload-Length": String(data.byteLength), "Upload-Metadata": metadataHeader({ filename: "Weekly talk.mp4" }) },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("Tus-Resumable")).toBe("1.0.0");
    const expires = Date.parse(res.headers.get("Upload-Expires") ?? "");
    expect(expires - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    const id = /upl_[A-Za-z0-9]+$/.exec(res.headers.get("Location") ?? "")![0];

    // 3 MiB + 17 bytes per PATCH: parts fill across PATCH boundaries.
    const chunk = 3 * MiB + 17;
    for (let offset = 0; offset < data.byteLength; offset += chunk) {
      const before = await head(account, id);
      expect(before.status).toBe(200);
      expect(Number(before.headers.get("Upload-Offset"))).toBe(offset);
      expect(Number(before.headers.get("Upload-Length"))).toBe(data.byteLength);
      expect(await before.text()).toBe("");
      const patched = await patch(account, id, offset, data.slice(offset, offset + chunk));
      expect(patched.status, await patched.clone().text()).toBe(204);
      expect(Number(patched.headers.get("Upload-Offset"))).toBe(Math.min(offset + chunk, data.byteLength));
    }
    const object = await env.UPLOADS.get(uploadKey(id));
    expect(object).not.toBeNull();
    expect(object!.size).toBe(data.byteLength);
    expect(await sha256(await object!.arrayBuffer())).toBe(await sha256(data));

    const described = await api(account, `/api/v1/uploads/${id}`);
    expect(await described.json()).toMatchObject({ upload_id: id, offset: data.byteLength, status: "complete", file_name: "Weekly talk.mp4", job_id: null });

    // A PATCH after completion is a wrong offset, and changes nothing.
    await expectProblem(await patch(account, id, data.byteLength, new Uint8Array([1])), 409, "upload_offset_mismatch");
    expect((await env.UPLOADS.head(uploadKey(id)))!.size).toBe(data.byteLength);
  });
});

describe("refusals, each a documented error", { timeout: 60_000 }, () => {
  it("wrong offset: 409 with the current offset, nothing stored", async () => {
    const account = await createAccount();
    const id = await createUpload(account, 1000);
    expect((await patch(account, id, 0, bytesOf(100))).status).toBe(204);
    for (const wrong of [0, 50, 101, 900]) {
      const res = await patch(account, id, wrong, bytesOf(10));
      expect(res.headers.get("Upload-Offset")).toBe("100");
      const problem = await expectProblem(res, 409, "upload_offset_mismatch");
      expect(problem.offset).toBe(100);
    }
    expect((await head(account, id)).headers.get("Upload-Offset")).toBe("100");
  });

  it("another account's upload is 404 for every method, and stays untouched", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const id = await createUpload(owner, 1000);
    expect((await patch(owner, id, 0, bytesOf(10))).status).toBe(204);
    // HEAD answers carry no body: the status says it.
    expect((await head(other, id)).status).toBe(404);
    await expectProblem(await api(other, `/api/v1/uploads/${id}`), 404, "not_found");
    await expectProblem(await patch(other, id, 10, bytesOf(10)), 404, "not_found");
    await expectProblem(await api(other, `/api/v1/uploads/${id}`, { method: "DELETE", headers: TUS }), 404, "not_found");
    expect((await head(owner, id)).headers.get("Upload-Offset")).toBe("10");
  });

  it("oversized upload: 413 above the plan's limit (free: 1 GiB), with the limit", async () => {
    const free = await createAccount("free");
    const res = await api(free, "/api/v1/uploads", { method: "POST", headers: { ...TUS, "Upload-Length": String(1024 ** 3 + 1) } });
    expect(res.headers.get("Tus-Max-Size")).toBe(String(1024 ** 3));
    const problem = await expectProblem(res, 413, "upload_too_large");
    expect(problem.max_size).toBe(1024 ** 3);
    const pro = await createAccount("pro");
    expect((await api(pro, "/api/v1/uploads", { method: "POST", headers: { ...TUS, "Upload-Length": String(1024 ** 3 + 1) } })).status).toBe(201);
  });

  it("a PATCH past Upload-Length or over the chunk limit: 413, offset unchanged", async () => {
    const account = await createAccount("pro");
    const id = await createUpload(account, 100);
    await expectProblem(await patch(account, id, 0, bytesOf(101)), 413, "upload_length_exceeded");
    expect((await head(account, id)).headers.get("Upload-Offset")).toBe("0");

    const big = await createUpload(account, 2 * MAX_PATCH_BYTES);
    const problem = await expectProblem(await patch(account, big, 0, new Uint8Array(MAX_PATCH_BYTES + 1)), 413, "upload_chunk_too_large");
    expect(problem.max_chunk_size).toBe(MAX_PATCH_BYTES);
    expect((await head(account, big)).headers.get("Upload-Offset")).toBe("0");
  });

  it("wrong content type: 415; missing or other tus version: 412 with Tus-Version", async () => {
    const account = await createAccount();
    const id = await createUpload(account, 100);
    for (const type of ["application/json", "application/octet-stream", ""]) {
      await expectProblem(await patch(account, id, 0, bytesOf(10), { "Content-Type": type }), 415, "unsupported_media_type");
    }
    const noVersion = await api(account, `/api/v1/uploads/${id}`, {
      method: "PATCH",
      headers: { "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream" },
      body: bytesOf(10),
    });
    expect(noVersion.headers.get("Tus-Version")).toBe("1.0.0");
    await expectProblem(noVersion, 412, "tus_version_unsupported");
    const old = await api(account, "/api/v1/uploads", { method: "POST", headers: { "Tus-Resumable": "0.2.2", "Upload-Length": "10" } });
    await expectProblem(old, 412, "tus_version_unsupported");
    expect((await head(account, id)).headers.get("Upload-Offset")).toBe("0");
  });

  it("bad creation headers: 400 invalid_request", async () => {
    const account = await createAccount();
    const cases: Record<string, string>[] = [
      {},
      { "Upload-Length": "-1" },
      { "Upload-Length": "0" },
      { "Upload-Length": "1e6" },
      { "Upload-Defer-Length": "1" },
      { "Upload-Length": "10", "Upload-Metadata": "filename not*base64" },
      { "Upload-Length": "10", "Upload-Metadata": "filename YQ==,filename Yg==" },
    ];
    for (const headers of cases) {
      await expectProblem(await api(account, "/api/v1/uploads", { method: "POST", headers: { ...TUS, ...headers } }), 400, "invalid_request");
    }
  });

  it("two PATCHes at once: one is received, the other gets 409 upload_busy; the offset counts only one", async () => {
    const account = await createAccount();
    const id = await createUpload(account, 1000);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let taken!: () => void;
    const firstBytesTaken = new Promise<void>((resolve) => (taken = resolve));
    let pulls = 0;
    // Pulled only when read (high-water mark 0): the first 60 bytes, then nothing until the test releases the rest.
    const slow = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          pulls += 1;
          if (pulls === 1) {
            controller.enqueue(bytesOf(60, 3));
            taken();
            return;
          }
          await held;
          controller.enqueue(bytesOf(40, 4));
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const first = patch(account, id, 0, slow);
    // Synchronise on events, not time: the first body is being read, and the upload's Durable Object is receiving it.
    await firstBytesTaken;
    const firstEnded = first.then(() => true);
    while (!(await isReceiving(id))) {
      if (await Promise.race([firstEnded, scheduler.wait(1).then(() => false)])) throw new Error(`the first PATCH ended (${(await first).status}) before it was received`);
    }
    await expectProblem(await patch(account, id, 0, bytesOf(100, 5)), 409, "upload_busy");
    release();
    expect((await first).status).toBe(204);
    expect((await head(account, id)).headers.get("Upload-Offset")).toBe("100");
  });
});

describe("expiry and termination leave nothing in R2", { timeout: 60_000 }, () => {
  it("an upload no job used expires: the alarm aborts the multipart upload; 410 afterwards", async () => {
    const account = await createAccount();
    const id = await createUpload(account, MIN_PART_BYTES + 100);
    expect((await patch(account, id, 0, bytesOf(MIN_PART_BYTES + 10))).status).toBe(204);
    const { multipartId } = await uploadInternals(id);
    expect(multipartId).not.toBeNull();
    await backdateExpiry(id);
    expect(await runDurableObjectAlarm(uploadStub(id))).toBe(true);

    expect((await head(account, id)).status).toBe(410);
    await expectProblem(await api(account, `/api/v1/uploads/${id}`), 410, "upload_expired");
    await expectProblem(await patch(account, id, MIN_PART_BYTES + 10, bytesOf(90)), 410, "upload_expired");
    expect(await storedKeys(id)).toEqual([]);
    expect(await multipartGone(id, multipartId!)).toBe(true);
    // Only the tombstone row is left, and its own alarm removes it later.
    expect((await uploadInternals(id)).rows).toBe(1);
    await runDurableObjectAlarm(uploadStub(id));
    expect((await uploadInternals(id)).rows).toBe(0);
  });

  it("an expired complete upload deletes its object", async () => {
    const account = await createAccount();
    const id = await uploadAll(account, bytesOf(5000), 2000);
    expect(await storedKeys(id)).toEqual([uploadKey(id)]);
    await backdateExpiry(id);
    await runDurableObjectAlarm(uploadStub(id));
    expect(await storedKeys(id)).toEqual([]);
  });

  it("DELETE discards a partial upload: 204, then 404, nothing in R2 or the object's storage", async () => {
    const account = await createAccount();
    const id = await createUpload(account, MIN_PART_BYTES * 2);
    expect((await patch(account, id, 0, bytesOf(MIN_PART_BYTES + 5))).status).toBe(204);
    const { multipartId } = await uploadInternals(id);
    const res = await api(account, `/api/v1/uploads/${id}`, { method: "DELETE", headers: TUS });
    expect(res.status).toBe(204);
    expect(res.headers.get("Tus-Resumable")).toBe("1.0.0");
    expect((await head(account, id)).status).toBe(404);
    expect(await storedKeys(id)).toEqual([]);
    expect(await multipartGone(id, multipartId!)).toBe(true);
    expect((await uploadInternals(id)).rows).toBe(0);
  });
});
