/**
 * Two logo writes of one account at once (src/logos/service.ts): whichever
 * order their steps take, the record names an object that exists, and no
 * object of the account outlives the record that named it.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { findLogo } from "../../src/db/logos.ts";
import { readLogo, storeLogo } from "../../src/logos/service.ts";
import { createAccount } from "./helpers.ts";
import { Gate, holdFirst } from "./hold.ts";
import { makePng, TINY_JPEG } from "./images.ts";

async function storedKeys(accountId: string): Promise<string[]> {
  return (await env.UPLOADS.list({ prefix: `logos/${accountId}/` })).objects.map((o) => o.key);
}

async function readBytes(accountId: string): Promise<Uint8Array | null> {
  const found = await readLogo(env, accountId);
  return found ? new Uint8Array(await new Response(found.body).arrayBuffer()) : null;
}

describe("concurrent logo writes", () => {
  it("a write that puts back the image another write is replacing keeps its object: the record never names a deleted one", async () => {
    const { accountId } = await createAccount();
    const first = await makePng({ width: 8, height: 8 });
    await storeLogo(env, accountId, first);
    // A replaces the first image with a JPEG and stops just before deleting what it replaced...
    const gate = new Gate();
    const replacing = storeLogo({ ...env, UPLOADS: holdFirst(env.UPLOADS, "delete", gate) }, accountId, TINY_JPEG);
    await gate.reached;
    expect((await findLogo(env.DB, accountId))?.contentType).toBe("image/jpeg");
    // ...while B puts the first image back, whole.
    await storeLogo(env, accountId, first);
    gate.release();
    await replacing;
    const logo = (await findLogo(env.DB, accountId))!;
    expect(logo.contentType).toBe("image/png");
    expect(await readBytes(accountId)).toEqual(first);
    // Nothing stray: the one object left is the one the record names.
    expect(await storedKeys(accountId)).toEqual([logo.objectKey]);
  });

  it("two replacements racing each other's record write leave the record's object and nothing else", async () => {
    const { accountId } = await createAccount();
    await storeLogo(env, accountId, await makePng({ width: 8, height: 8 }));
    const second = await makePng({ width: 12, height: 12 });
    // A has written its object and waits before its record write; B replaces the logo meanwhile.
    const gate = new Gate();
    const a = storeLogo({ ...env, DB: holdFirst(env.DB, "batch", gate) }, accountId, TINY_JPEG);
    await gate.reached;
    await storeLogo(env, accountId, second);
    gate.release();
    await a;
    const logo = (await findLogo(env.DB, accountId))!;
    expect(logo.contentType).toBe("image/jpeg");
    expect(await readBytes(accountId)).toEqual(TINY_JPEG);
    expect(await storedKeys(accountId)).toEqual([logo.objectKey]);
  });
});
