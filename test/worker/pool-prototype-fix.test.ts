/**
 * The test pool's prototype workaround (pool-prototype-fix.ts), on wrappers
 * built the way the pool builds its Durable Object and Worker entrypoint
 * wrappers: with the workaround a lookup on the thousandth object walks one
 * proxy, without it a thousand. (bench/fleet/pool.bench-run.ts times real
 * AccountState calls.)
 */
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { installPoolPrototypeFix, uninstallPoolPrototypeFix } from "./pool-prototype-fix.ts";

/** The pool's createProxyPrototypeClass, counting its get traps. */
function poolWrapper(base: typeof DurableObject | typeof WorkerEntrypoint = DurableObject) {
  const counter = { traps: 0 };
  function Class(this: unknown, ...args: unknown[]): object {
    Class.prototype = new Proxy(Class.prototype as object, {
      get(target, key, receiver) {
        counter.traps += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    return Reflect.construct(base, args, Class);
  }
  Reflect.setPrototypeOf(Class.prototype, base.prototype);
  Reflect.setPrototypeOf(Class, base);
  return { Class: Class as unknown as new (...args: unknown[]) => Record<string, unknown>, counter };
}

/** Builds `objects` wrapper objects (on a real Durable Object's state, which the base class demands) and counts one lookup's traps. */
async function trapsOnLookupAfter(objects: number): Promise<number> {
  const { Class, counter } = poolWrapper();
  const stub = env.ACCOUNTS.get(env.ACCOUNTS.idFromName(`pool-fix-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_instance, state) => {
    let last: Record<string, unknown> = {};
    for (let i = 0; i < objects; i += 1) last = new Class(state, env);
    counter.traps = 0;
    void last.someRpcMethod;
    return counter.traps;
  });
}

/** The same for the Worker's entrypoint wrapper (built for every SELF.fetch, queue or scheduled event). */
function entrypointTrapsOnLookupAfter(objects: number): number {
  const { Class, counter } = poolWrapper(WorkerEntrypoint);
  let last: Record<string, unknown> = {};
  for (let i = 0; i < objects; i += 1) last = new Class(createExecutionContext(), env);
  counter.traps = 0;
  void last.someRpcMethod;
  return counter.traps;
}

describe("the pool prototype workaround", () => {
  afterEach(() => installPoolPrototypeFix());

  it("keeps every object one proxy deep", async () => {
    installPoolPrototypeFix();
    expect(await trapsOnLookupAfter(1000)).toBe(1);
  });

  it("is what stands between a lookup and a chain as long as the objects built", async () => {
    uninstallPoolPrototypeFix();
    expect(await trapsOnLookupAfter(1000)).toBe(1000);
  });

  it("keeps the Worker's entrypoint wrapper one proxy deep too", () => {
    installPoolPrototypeFix();
    expect(entrypointTrapsOnLookupAfter(1000)).toBe(1);
    uninstallPoolPrototypeFix();
    expect(entrypointTrapsOnLookupAfter(1000)).toBe(1000);
  });
});
