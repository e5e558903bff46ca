import { describe, expect, it } from "vitest";
import { DEFAULT_CLIP_CONFIG, REFRAME_MODES } from "#contract";
import { api, createAccount, expectProblem } from "./helpers.ts";

function put(account: { apiKey: string }, name: string, body: unknown) {
  return api(account, `/api/v1/configs/${name}`, { method: "PUT", body: JSON.stringify(body) });
}

describe("saved configurations", () => {
  it("creates (201), replaces (200), reads, lists and deletes", async () => {
    const account = await createAccount();
    const created = await put(account, "shorts", { aspect_ratio: "1:1", max_clips: 3 });
    expect(created.status).toBe(201);
    const body = await created.json<Record<string, unknown>>();
    expect(body).toMatchObject({ ...DEFAULT_CLIP_CONFIG, name: "shorts", aspect_ratio: "1:1", max_clips: 3 });

    const replaced = await put(account, "shorts", { resolution: 720 });
    expect(replaced.status).toBe(200);
    // PUT replaces the whole configuration: omitted fields go back to their defaults.
    expect(await replaced.json()).toMatchObject({ ...DEFAULT_CLIP_CONFIG, resolution: 720, created_at: body.created_at });

    await put(account, "another", {});
    const list = await (await api(account, "/api/v1/configs")).json<{ configs: { name: string }[]; count: number }>();
    expect(list.configs.map((c) => c.name)).toEqual(["another", "shorts"]);
    expect(list.count).toBe(2);

    expect(await (await api(account, "/api/v1/configs/shorts")).json()).toMatchObject({ name: "shorts", resolution: 720 });
    expect((await api(account, "/api/v1/configs/shorts", { method: "DELETE" })).status).toBe(204);
    await expectProblem(await api(account, "/api/v1/configs/shorts"), 404, "not_found");
    await expectProblem(await api(account, "/api/v1/configs/shorts", { method: "DELETE" }), 404, "not_found");
  });

  it("keeps each account's configurations to itself", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    expect((await put(owner, "mine", { max_clips: 2 })).status).toBe(201);
    await expectProblem(await api(other, "/api/v1/configs/mine"), 404, "not_found");
    expect((await (await api(other, "/api/v1/configs")).json<{ count: number }>()).count).toBe(0);
    // The same name in another account is a separate configuration.
    expect((await put(other, "mine", { max_clips: 9 })).status).toBe(201);
    expect(await (await api(owner, "/api/v1/configs/mine")).json()).toMatchObject({ max_clips: 2 });
  });

  it("validates with the contract's ClipConfig schema, listing every problem", async () => {
    const account = await createAccount();
    const cases: [unknown, string[]][] = [
      [{ aspect_ratio: "3:2" }, ["aspect_ratio"]],
      [{ resolution: 480 }, ["resolution"]],
      [{ min_clip_seconds: 4 }, ["min_clip_seconds"]],
      [{ max_clip_seconds: 181 }, ["max_clip_seconds"]],
      [{ max_clips: 0, reframe: "zoom" }, ["max_clips", "reframe"]],
      [{ min_clip_seconds: 40, max_clip_seconds: 30 }, ["max_clip_seconds"]],
      [{ max_clips: "5" }, ["max_clips"]],
      [{ zoom: "always" }, ["zoom"]],
      [{ surprise: true }, ["(body)"]],
      [[], ["(body)"]],
    ];
    for (const [body, paths] of cases) {
      const problem = await expectProblem(await put(account, "bad", body), 400, "invalid_request");
      expect(problem.errors?.map((e) => e.path)).toEqual(paths);
      for (const error of problem.errors ?? []) expect(error.message.length).toBeGreaterThan(0);
    }
    await expectProblem(await api(account, "/api/v1/configs/bad"), 404, "not_found");
  });

  it("accepts the boundaries of every field", async () => {
    const account = await createAccount();
    const low = { aspect_ratio: "original", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, reframe: "auto" };
    const high = { aspect_ratio: "16:9", resolution: 1080, min_clip_seconds: 120, max_clip_seconds: 180, max_clips: 20, reframe: "center" };
    expect(await (await put(account, "low", low)).json()).toMatchObject(low);
    expect(await (await put(account, "high", high)).json()).toMatchObject(high);
    // Every reframing mode, fit (the whole frame over a blurred copy) included.
    for (const reframe of REFRAME_MODES) expect(await (await put(account, `reframe-${reframe}`, { reframe })).json()).toMatchObject({ reframe });
  });

  it("accepts safe names only", async () => {
    const account = await createAccount();
    for (const name of ["a", "clips_9-16", "x".repeat(64)]) expect((await put(account, name, {})).status).toBe(201);
    for (const name of ["Upper", "-dash-first", "x".repeat(65), "sp%20ace", "dot.name"]) {
      const problem = await expectProblem(await put(account, name, {}), 400, "invalid_request");
      expect(problem.errors?.[0]?.path).toBe("name");
    }
  });

  it("makes a deleted configuration unusable for submissions (422 config_not_found)", async () => {
    const account = await createAccount();
    expect((await put(account, "gone", { max_clips: 2 })).status).toBe(201);
    expect((await api(account, "/api/v1/configs/gone", { method: "DELETE" })).status).toBe(204);
    const res = await api(account, "/api/v1/jobs", {
      method: "POST",
      body: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "vlog", config_name: "gone" }),
    });
    await expectProblem(res, 422, "config_not_found");
  });
});
