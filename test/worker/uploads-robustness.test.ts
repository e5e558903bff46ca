/**
 * Uploads that must never become unusable through their own metadata or an
 * odd PATCH: a file name long enough to be cut inside a surrogate pair (the
 * job's source URL used to throw after the upload was claimed: 500, then
 * 409 upload_in_use for hours), a name stored malformed by an older version,
 * and a final PATCH sent chunked that is longer than what remains (it used to
 * keep the bytes up to Upload-Length without completing the upload); and the
 * per-plan caps on an account's open uploads (count and bytes), exact under
 * concurrency, with every way an upload ends giving its place back.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { uploadKey } from "../../src/uploads/ids.ts";
import { discardBody } from "../../src/uploads/discard-body.ts";
import { MAX_DRAIN_BYTES } from "../../src/http/unread-body.ts";
import { MAX_PATCH_BYTES, MIN_PART_BYTES } from "../../src/uploads/limits.ts";
import type { UploadState } from "../../src/uploads/upload-state.ts";
import { FakeEngine } from "./engine-stub.ts";
import { accountState } from "../../src/account/stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { submit } from "./jobs-helpers.ts";
import { backdateExpiry, bytesOf, createUpload, head, metadataHeader, patch, TUS, uploadAll, uploadStub } from "./uploads-helpers.ts";

beforeEach(() => {
  new FakeEngine().install();
});

/** A body sent without Content-Length (Transfer-Encoding: chunked), in pieces of `piece` bytes. */
function chunked(data: Uint8Array, piece = 64 * 1024): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= data.byteLength) return controller.close();
      controller.enqueue(data.slice(at, at + piece));
      at += piece;
    },
  });
}

async function sha256(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("a long file name", { timeout: 30_000 }, () => {
  it("is cut on code points: the job is created (201) with the name's first 255 characters, and the upload is taken by it", async () => {
    const account = await createAccount();
    // 300 emoji: 600 UTF-16 units; a cut at 255 units ends inside a pair.
    const name = "😀".repeat(300);
    const id = await uploadAll(account, bytesOf(5000, 3), 5000, name);
    const res = await submit(account, { upload_id: id, video_type: "podcast" });
    expect(res.status, await res.clone().text()).toBe(201);
    const job = await res.json<{ job_id: string; title: string | null }>();
    expect(job.title).toBe("😀".repeat(255));
    const upload = await (await api(account, `/api/v1/uploads/${id}`)).json<{ job_id: string | null; file_name?: string | null }>();
    expect(upload.job_id).toBe(job.job_id);
  });

  it("an upload whose stored name ends in half a pair (stored before names were cut on code points) still makes a job", async () => {
    const account = await createAccount();
    const id = await uploadAll(account, bytesOf(5000, 4), 5000, "talk.mp4");
    await runInDurableObject(uploadStub(id), (_instance: UploadState, state) => {
      state.storage.sql.exec(`UPDATE upload SET file_name = ?`, `${"a".repeat(254)}\ud83d`);
    });
    const res = await submit(account, { upload_id: id, video_type: "podcast" });
    expect(res.status, await res.clone().text()).toBe(201);
    const { title, job_id: jobId } = await res.json<{ title: string; job_id: string }>();
    // Storage keeps the half pair as bytes that read back as replacement characters; the title is well-formed text.
    expect(title.startsWith("a".repeat(254))).toBe(true);
    expect(/[\ud800-\udfff]/.test(title.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ""))).toBe(false);
    expect((await (await api(account, `/api/v1/uploads/${id}`)).json<{ job_id: string | null }>()).job_id).toBe(jobId);
  });
});

describe("a final PATCH sent chunked that is longer than what remains", { timeout: 60_000 }, () => {
  it("is refused whole (413 upload_length_exceeded): nothing of it is stored, and the right PATCH then completes the upload", async () => {
    const account = await createAccount();
    const data = bytesOf(40_000, 5);
    const id = await createUpload(account, data.byteLength);
    expect((await patch(account, id, 0, data.slice(0, 30_000))).status).toBe(204);

    const tooLong = new Uint8Array(20_000);
    tooLong.set(data.slice(30_000));
    const problem = await expectProblem(await patch(account, id, 30_000, chunked(tooLong, 4096)), 413, "upload_length_exceeded");
    expect(problem.offset).toBe(30_000);
    const after = await head(account, id);
    expect(after.headers.get("Upload-Offset")).toBe("30000");
    await expectProblem(await submit(account, { upload_id: id, video_type: "podcast" }), 409, "upload_incomplete");

    expect((await patch(account, id, 30_000, chunked(data.slice(30_000), 4096))).status).toBe(204);
    expect((await head(account, id)).headers.get("Upload-Offset")).toBe("40000");
    const stored = await env.UPLOADS.get(uploadKey(id));
    expect(await sha256(await stored!.arrayBuffer())).toBe(await sha256(data));
    expect((await submit(account, { upload_id: id, video_type: "podcast" })).status).toBe(201);
  });

  it("also when the refused body had already filled a whole R2 part: the part is forgotten, the object is exactly the bytes sent right", async () => {
    const account = await createAccount();
    const data = bytesOf(MIN_PART_BYTES + 100, 6);
    const id = await createUpload(account, data.byteLength);
    expect((await patch(account, id, 0, data.slice(0, 50))).status).toBe(204);
    // From offset 50: a whole part (10 MiB) fills before the body runs past the length.
    const tooLong = bytesOf(MIN_PART_BYTES + 1000, 7);
    await expectProblem(await patch(account, id, 50, chunked(tooLong, 1024 * 1024)), 413, "upload_length_exceeded");
    expect((await head(account, id)).headers.get("Upload-Offset")).toBe("50");

    expect((await patch(account, id, 50, chunked(data.slice(50), 1024 * 1024))).status).toBe(204);
    const stored = await env.UPLOADS.get(uploadKey(id));
    expect(stored!.size).toBe(data.byteLength);
    expect(await sha256(await stored!.arrayBuffer())).toBe(await sha256(data));
  });
});

/** A plan of its own for these tests (the plans table is the one place limits live). */
async function accountOnPlan(maxOpenUploads: number, maxOpenUploadBytes: number): Promise<TestAccount> {
  const name = `caps-${crypto.randomUUID().slice(0, 8)}`;
  await env.DB.prepare(
    `INSERT INTO plans (name, credits_per_period, requests_per_minute, max_active_jobs, max_upload_bytes, max_open_uploads, max_open_upload_bytes)
     VALUES (?, 600, 100000, 1, 1073741824, ?, ?)`,
  )
    .bind(name, maxOpenUploads, maxOpenUploadBytes)
    .run();
  return createAccount(name);
}

function create(account: TestAccount, length: number): Promise<Response> {
  return api(account, "/api/v1/uploads", {
    method: "POST",
    headers: { ...TUS, "Upload-Length": String(length), "Upload-Metadata": metadataHeader({ filename: "talk.mp4" }) },
  });
}

function idOf(res: Response): string {
  return (res.headers.get("Location") ?? "").split("/").pop()!;
}

describe("open uploads per account are capped by count and bytes (plans table)", { timeout: 60_000 }, () => {
  it("the plans carry the caps: free 3 uploads / 3 GiB", async () => {
    const free = await env.DB.prepare(`SELECT max_open_uploads AS n, max_open_upload_bytes AS b FROM plans WHERE name = 'free'`).first<{ n: number; b: number }>();
    expect(free).toEqual({ n: 3, b: 3 * 1024 ** 3 });
  });

  it("by count: the next creation is 409 upload_limit_reached with the numbers; deleting one gives its place back", async () => {
    const account = await accountOnPlan(3, 10_000_000);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await create(account, 1000);
      expect(res.status).toBe(201);
      ids.push(idOf(res));
    }
    const refused = await expectProblem(await create(account, 1000), 409, "upload_limit_reached");
    expect(refused).toMatchObject({ max_open_uploads: 3, max_open_upload_bytes: 10_000_000, open_uploads: 3, open_upload_bytes: 3000 });
    expect((await api(account, `/api/v1/uploads/${ids[0]}`, { method: "DELETE", headers: TUS })).status).toBe(204);
    expect((await create(account, 1000)).status).toBe(201);
  });

  it("by bytes: declared lengths count together", async () => {
    const account = await accountOnPlan(10, 5000);
    expect((await create(account, 3000)).status).toBe(201);
    await expectProblem(await create(account, 2001), 409, "upload_limit_reached");
    expect((await create(account, 2000)).status).toBe(201);
    await expectProblem(await create(account, 1), 409, "upload_limit_reached");
  });

  it("50 creations at once stay at the cap, and nothing is left of the refused ones", async () => {
    const account = await accountOnPlan(7, 10_000_000);
    const answers = await Promise.all(Array.from({ length: 50 }, () => create(account, 1000)));
    expect(answers.filter((r) => r.status === 201).length).toBe(7);
    for (const res of answers.filter((r) => r.status !== 201)) await expectProblem(res, 409, "upload_limit_reached");
    expect(await accountState(env, account.accountId).openUploads()).toEqual({ count: 7, bytes: 7000 });
  });

  it("an upload that expires, and one whose job ends, give their places back", async () => {
    const account = await accountOnPlan(2, 10_000_000);
    const expiring = idOf(await create(account, 1000));
    const used = await uploadAll(account, bytesOf(2000, 8), 2000);
    await expectProblem(await create(account, 1000), 409, "upload_limit_reached");

    await backdateExpiry(expiring);
    expect(await runDurableObjectAlarm(uploadStub(expiring))).toBe(true);
    expect((await accountState(env, account.accountId).openUploads()).count).toBe(1);

    const job = await (await submit(account, { upload_id: used, video_type: "podcast" })).json<{ job_id: string }>();
    expect((await api(account, `/api/v1/jobs/${job.job_id}/cancel`, { method: "POST" })).status).toBe(200);
    expect(await accountState(env, account.accountId).openUploads()).toEqual({ count: 0, bytes: 0 });
    expect((await create(account, 1000)).status).toBe(201);
  });
});

/** A body of `chunks` chunks of `size` bytes that counts what was pulled from it and whether it was canceled. */
function countedBody(chunks: number, size: number): { body: ReadableStream<Uint8Array>; pulled: () => number; canceled: () => boolean } {
  let pulled = 0;
  let canceled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled === chunks) return controller.close();
        pulled += 1;
        controller.enqueue(new Uint8Array(size));
      },
      cancel() {
        canceled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled: () => pulled, canceled: () => canceled };
}

describe("a refused PATCH body (discardBody)", () => {
  it("is read to its end when its declared size is allowed, so the connection can carry the client's next request", async () => {
    const counted = countedBody(8, 1024);
    await discardBody(counted.body, 8 * 1024);
    expect(counted.pulled()).toBe(8);
    expect(counted.canceled()).toBe(false);
  });

  it("is read to its end without a declared size too, and canceled unread only past the bound of what is ever drained", async () => {
    const undeclared = countedBody(8, 1024);
    await discardBody(undeclared.body, null);
    expect(undeclared.pulled()).toBe(8);
    expect(undeclared.canceled()).toBe(false);

    const tooLarge = countedBody(8, 1024);
    await discardBody(tooLarge.body, MAX_DRAIN_BYTES + 1);
    expect(tooLarge.canceled()).toBe(true);
    expect(tooLarge.pulled()).toBe(0);

    // Sent without a size and running on: read up to the bound, then canceled.
    const endless = countedBody(1000, 1024 * 1024);
    await discardBody(endless.body, null);
    expect(endless.canceled()).toBe(true);
    expect(endless.pulled()).toBe(MAX_DRAIN_BYTES / (1024 * 1024) + 1);
  });
});
