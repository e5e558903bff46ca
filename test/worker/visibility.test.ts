/**
 * Nothing of a job is readable on {cdn_url} before it is completed and
 * charged (SPEC section 9): the engine's uploads wait in the
 * private bucket (a clip's video as an incomplete multipart upload, which is
 * no object), completion publishes them under keys of their own in the
 * step that charges, a canceled job publishes nothing, the transcript is
 * only ever served by the API, and deleting the job removes what was
 * published. The CDN here is the Worker's /cdn, which serves exactly the
 * public bucket, as the R2 custom domain does in production.
 */
import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import { findJob, findPublicationKey } from "../../src/db/jobs.ts";
import { cancelJob } from "../../src/jobs/lifecycle.ts";
import { publishedKeys, publishStaged } from "../../src/jobs/publication.ts";
import { clipReport, expectAck, FakeEngine, patternBytes, type EngineClient } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { getJob, getUsage } from "./jobs-helpers.ts";
import { CLIP_SRT, CLIP_VTT, processingJob, put, TRANSCRIPT } from "./speech-helpers.ts";
import { added, keyOf, publicKeys, PUBLISHED_URL, stagedKeys } from "./storage-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

/** Two rendered clips with thumbnails and captions, and the transcript: what an engine has uploaded midway. */
async function renderTwo(client: EngineClient): Promise<Uint8Array[]> {
  const clips = [];
  for (const index of [0, 1]) {
    clips.push((await client.uploadClip(index, 3000 + index)).clip);
    await expectAck(await put(client, `clips/${index}/captions.vtt`, CLIP_VTT, "text/vtt"));
    await expectAck(await put(client, `clips/${index}/captions.srt`, CLIP_SRT, "application/x-subrip"));
  }
  await expectAck(await put(client, "transcript", JSON.stringify(TRANSCRIPT), "application/json"));
  return clips;
}

/** Every key the API, the old scheme (clips/{job_id}/...) or the staging layout could name for the job. */
function guessableKeys(jobId: string): string[] {
  const perClip = [0, 1, 2].flatMap((n) =>
    ["mp4", "jpg", "vtt", "srt"].flatMap((ext) => [`clips/${jobId}/${n}.${ext}`, `staging/${jobId}/${n}.${ext}`, `${jobId}/${n}.${ext}`]),
  );
  return [...perClip, `transcripts/${jobId}.json`, `transcripts/${jobId}`, `clips/${jobId}/transcript.json`];
}

async function cdnStatus(key: string): Promise<number> {
  const res = await SELF.fetch(`${env.CDN_URL}/${key}`);
  await res.body?.cancel();
  return res.status;
}

function completeTwo(client: EngineClient): Promise<Response> {
  return client.complete({
    title: "Talk",
    source_duration_seconds: 60,
    clips: [clipReport(0, { sidecars: true }), clipReport(1, { sidecars: true })],
    transcript: { source: "subtitle_track", language: "en", word_count: 7 },
    transcript_unavailable_reason: null,
  });
}

async function anotherAccount(): Promise<TestAccount> {
  return createAccount("unmetered");
}

describe("while a job is processing", () => {
  it("no object of the job is reachable on the CDN under any key the API or the old scheme could reveal", async () => {
    const account = await createAccount();
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const job = await getJob(account, client.jobId);
    expect(job.status).toBe("processing");
    expect(JSON.stringify(job)).not.toMatch(/cdn|staging|transcripts\//);
    for (const key of guessableKeys(client.jobId)) expect(await cdnStatus(key), key).toBe(404);
    // Stronger than any guess: the public bucket (all the CDN serves) gained nothing.
    expect(added(before, await publicKeys())).toEqual([]);
    expect(await stagedKeys(client.jobId)).toHaveLength(8);
    // Not even the keys completion will publish at, where the clips wait as incomplete uploads.
    const [published] = await publishedKeys((await findPublicationKey(env.DB, client.jobId))!, [clipReport(0, { sidecars: true })]);
    for (const key of [published!.clip, published!.thumbnail, published!.vtt!, published!.srt!]) {
      expect(await cdnStatus(key), key).toBe(404);
      expect(await env.CLIPS.head(key), key).toBeNull();
    }
  });

  it("a cancel after two rendered clips leaves nothing reachable and charges nothing", async () => {
    const account = await createAccount();
    const credits = (await getUsage(account)).credits_remaining;
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const uploads = await Promise.all([0, 1].map(async (n) => (await env.UPLOADS.head(`staging/${client.jobId}/${n}.mp4`))!.customMetadata!));
    expect((await api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await getUsage(account)).credits_remaining).toBe(credits);
    expect((await getJob(account, client.jobId)).credits_charged).toBe(0);
    for (const key of guessableKeys(client.jobId)) expect(await cdnStatus(key), key).toBe(404);
    expect(added(before, await publicKeys())).toEqual([]);
    // The staged uploads and the transcript are deleted, not just hidden: the clips' uploads are aborted,
    // so not even a completion with their ids can make them objects.
    expect(await stagedKeys(client.jobId)).toEqual([]);
    for (const upload of uploads) {
      await expect(env.CLIPS.resumeMultipartUpload(upload.key!, upload.upload_id!).complete([{ partNumber: 1, etag: upload.part_etag! }])).rejects.toThrow();
      expect(await env.CLIPS.head(upload.key!)).toBeNull();
    }
    expect(await env.UPLOADS.head(`transcripts/${client.jobId}.json`)).toBeNull();
    // A completion the engine sends afterwards publishes nothing either.
    await expectProblem(await completeTwo(client), 409, "job_not_active");
    expect(added(before, await publicKeys())).toEqual([]);
  });
});

describe("at completion", () => {
  it("publishes under keys that differ from the staging keys, each object its own; the transcript stays API-only", async () => {
    const account = await createAccount();
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    const bytes = await renderTwo(client);
    await expectAck(await completeTwo(client));
    const job = await getJob(account, client.jobId);
    expect(job.status).toBe("completed");
    expect(job.credits_charged).toBe(1);
    const clips = job.clips as unknown as { url: string; thumbnail_url: string; captions: { vtt_url: string; srt_url: string } }[];
    const urls = clips.flatMap((clip) => [clip.url, clip.thumbnail_url, clip.captions.vtt_url, clip.captions.srt_url]);
    for (const url of urls) {
      expect(url).toMatch(PUBLISHED_URL);
      expect(url).not.toContain(client.jobId);
    }
    // One unguessable id per object: one URL tells nothing about another.
    expect(new Set(urls.map((url) => url.split("/").at(-2))).size).toBe(urls.length);
    expect(added(before, await publicKeys())).toEqual(urls.map(keyOf).sort());
    for (const [i, clip] of clips.entries()) {
      const served = await SELF.fetch(clip.url);
      expect(served.status).toBe(200);
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(bytes[i]);
      expect(await (await SELF.fetch(clip.captions.vtt_url)).text()).toBe(CLIP_VTT);
    }
    // The old and the staging keys still name nothing public; the staged copies are gone.
    for (const key of guessableKeys(client.jobId)) expect(await cdnStatus(key), key).toBe(404);
    expect(await stagedKeys(client.jobId)).toEqual([]);
    // The transcript: 404 on the CDN, 200 through the API for its owner only.
    expect(await cdnStatus(`transcripts/${client.jobId}.json`)).toBe(404);
    expect((await api(account, `/api/v1/jobs/${client.jobId}/transcript`)).status).toBe(200);
    await expectProblem(await api(await anotherAccount(), `/api/v1/jobs/${client.jobId}/transcript`), 404, "not_found");

    // Deleting the job makes every published URL 404.
    expect((await api(account, `/api/v1/jobs/${client.jobId}`, { method: "DELETE" })).status).toBe(204);
    for (const url of urls) expect((await SELF.fetch(url)).status).toBe(404);
    expect(added(before, await publicKeys())).toEqual([]);
    expect(await env.UPLOADS.head(`transcripts/${client.jobId}.json`)).toBeNull();
  });

  it("a completion that loses its transition (canceled while publishing) leaves nothing published", async () => {
    const account = await createAccount();
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    await renderTwo(client);
    // The public bucket as the completion sees it: the job is canceled as the first object is copied.
    let canceledOnce = false;
    const racing: R2Bucket = new Proxy(env.CLIPS, {
      get(target, prop) {
        if (prop === "put") {
          return async (...args: Parameters<R2Bucket["put"]>) => {
            const stored = await target.put(...args);
            if (!canceledOnce) {
              canceledOnce = true;
              await cancelJob(env, (await findJob(env.DB, client.jobId))!);
            }
            return stored;
          };
        }
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request(client.url("complete"), {
        method: "POST",
        headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          title: "Talk",
          source_duration_seconds: 60,
          clips: [clipReport(0, { sidecars: true }), clipReport(1, { sidecars: true })],
          transcript: null,
          transcript_unavailable_reason: null,
        }),
      }),
      { ...env, CLIPS: racing },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    await expectProblem(res, 409, "job_not_active");
    expect(canceledOnce).toBe(true);
    expect((await getJob(account, client.jobId)).status).toBe("canceled");
    expect(added(before, await publicKeys())).toEqual([]);
    expect(await stagedKeys(client.jobId)).toEqual([]);
  });

  it("publishing is resumable: out of time it answers 'more', and the next attempt does only what is missing", async () => {
    const account = await createAccount();
    const client = await processingJob(engine, account);
    await renderTwo(client);
    // The clips' uploads were staged at the keys of the job's own publication key, claimed by the first clip upload.
    const publicationKey = await findPublicationKey(env.DB, client.jobId);
    expect(publicationKey).not.toBeNull();
    const keys = await publishedKeys(publicationKey!, [clipReport(0, { sidecars: true }), clipReport(1, { sidecars: true })]);
    let puts = 0;
    let completions = 0;
    const counting: R2Bucket = new Proxy(env.CLIPS, {
      get(target, prop) {
        if (prop === "put") return (...args: Parameters<R2Bucket["put"]>) => ((puts += 1), target.put(...args));
        if (prop === "resumeMultipartUpload") {
          return (key: string, uploadId: string): R2MultipartUpload => {
            const upload = target.resumeMultipartUpload(key, uploadId);
            return {
              key: upload.key,
              uploadId: upload.uploadId,
              uploadPart: upload.uploadPart.bind(upload),
              abort: upload.abort.bind(upload),
              complete: (parts: R2UploadedPart[]) => ((completions += 1), upload.complete(parts)),
            };
          };
        }
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const counted = { ...env, CLIPS: counting };
    expect(await publishStaged(counted, client.jobId, keys, -1)).toBe("more");
    expect([puts, completions]).toEqual([0, 0]);
    for (const clip of keys) expect(await env.CLIPS.head(clip.clip)).toBeNull();
    expect(await publishStaged(counted, client.jobId, keys)).toBe("done");
    // Thumbnails and caption sidecars are copied; a clip's upload is completed, not copied.
    expect([puts, completions]).toEqual([6, 2]);
    expect(await publishStaged(counted, client.jobId, keys)).toBe("done");
    expect(puts).toBe(6);
    const stored = await env.CLIPS.get(keys[1]!.clip);
    expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(patternBytes(3001, 2));
    for (const clip of keys) await env.CLIPS.delete([clip.clip, clip.thumbnail, clip.vtt!, clip.srt!]);
  });
});

describe("a clip staged as an incomplete upload (src/jobs/clip-staging.ts)", () => {
  it("a retried clip upload replaces the staged one: the replaced upload is aborted and completion publishes the retry's bytes", async () => {
    const account = await createAccount();
    const client = await processingJob(engine, account);
    const marker = async () => (await env.UPLOADS.head(`staging/${client.jobId}/0.mp4`))!.customMetadata!;
    await client.uploadClip(0, 3000);
    const first = await marker();
    const retry = await client.uploadClip(0, 3500);
    const second = await marker();
    expect(second.key).toBe(first.key);
    expect(second.upload_id).not.toBe(first.upload_id);
    await expect(env.CLIPS.resumeMultipartUpload(first.key!, first.upload_id!).complete([{ partNumber: 1, etag: first.part_etag! }])).rejects.toThrow();
    expect(await env.CLIPS.head(first.key!)).toBeNull();
    await expectAck(await client.complete({ title: "Talk", source_duration_seconds: 60, clips: [clipReport(0)] }));
    const job = await getJob(account, client.jobId);
    expect(keyOf(job.clips![0]!.url)).toBe(first.key);
    const published = await env.CLIPS.get(first.key!);
    expect(new Uint8Array(await published!.arrayBuffer())).toEqual(retry.clip);
    expect(published?.httpMetadata?.contentType).toBe("video/mp4");
  });

  it("a job that ends while its clip is being staged keeps nothing of it: the upload is aborted and its marker deleted", async () => {
    const account = await createAccount();
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    // The public bucket as the clip's upload sees it: the job is canceled as its multipart upload starts.
    let started: R2MultipartUpload | null = null;
    const racing: R2Bucket = new Proxy(env.CLIPS, {
      get(target, prop) {
        if (prop === "createMultipartUpload") {
          return async (...args: Parameters<R2Bucket["createMultipartUpload"]>) => {
            started = await target.createMultipartUpload(...args);
            await cancelJob(env, (await findJob(env.DB, client.jobId))!);
            return started;
          };
        }
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const bytes = patternBytes(4096, 7);
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request(client.url("clips/0"), {
        method: "PUT",
        headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "video/mp4", "Content-Length": String(bytes.byteLength) },
        body: bytes,
      }),
      { ...env, CLIPS: racing },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    await expectProblem(res, 409, "job_not_active");
    expect((await getJob(account, client.jobId)).status).toBe("canceled");
    expect(started).not.toBeNull();
    const upload = started! as R2MultipartUpload;
    await expect(upload.complete([{ partNumber: 1, etag: "any" }])).rejects.toThrow();
    expect(await env.CLIPS.head(upload.key)).toBeNull();
    expect(await stagedKeys(client.jobId)).toEqual([]);
    expect(added(before, await publicKeys())).toEqual([]);
  });
});
