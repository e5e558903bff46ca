/**
 * A workaround for @cloudflare/vitest-pool-workers (0.15.1 here; still so in
 * 0.23.0, the newest release, and every release after 0.15.1 needs wrangler
 * 4.87+, which needs Node 22): the pool wraps each Durable Object class in a
 * class whose constructor does
 *
 *     Class.prototype = new Proxy(Class.prototype, { get ... })
 *
 * before `Reflect.construct(DurableObject, args, Class)`
 * (dist/worker/lib/cloudflare/test-internal.mjs, createProxyPrototypeClass).
 * Every object ever constructed so adds one more proxy around the last, and
 * a method looked up on the n-th object walks n get traps: a call grows
 * slower with every object built, and deep enough it overflows the stack
 * (issue 23: 0.9 ms a call at 201 objects, 102 ms at 1,401, a stack
 * overflow near 1,600).
 *
 * The trap reads nothing but its target and the receiver, so one proxy
 * serves every instance as well as n nested ones. Worker code and tests
 * share one isolate, so the pool's `Reflect.construct` call is ours to see:
 * when it constructs a Durable Object for a wrapper class, the wrapper's
 * prototype is set back to the first proxy it ever made, and the chain
 * stays one deep. Nothing else is touched: other constructions pass through.
 *
 * The pool builds its wrapper of the Worker's own entrypoint (what SELF.fetch
 * and the queue and scheduled handlers reach) with the same function, and
 * workerd constructs that wrapper for every event: without the workaround
 * each SELF.fetch made every later one slower (issue 26: a health check took
 * 4 ms at first and about 100 ms after 900 requests, so a test file's request
 * cost grew with the requests sent before it). WorkerEntrypoint and
 * WorkflowEntrypoint wrappers get the same treatment.
 */
import { DurableObject, WorkerEntrypoint, WorkflowEntrypoint } from "cloudflare:workers";

type Construct = typeof Reflect.construct;

const original: Construct = Reflect.construct;
const firstProxy = new WeakMap<object, object>();
/** The base classes the pool wraps with createProxyPrototypeClass. */
const WRAPPED_BASES = new Set<unknown>([DurableObject, WorkerEntrypoint, WorkflowEntrypoint]);

const patched = (target: Function, args: ArrayLike<unknown>, newTarget?: Function): object => {
  if (WRAPPED_BASES.has(target) && newTarget !== undefined && newTarget !== target) {
    const wrapper = newTarget as { prototype: object };
    const first = firstProxy.get(newTarget);
    if (first === undefined) firstProxy.set(newTarget, wrapper.prototype);
    else wrapper.prototype = first;
  }
  return newTarget === undefined ? original(target, args) : original(target, args, newTarget);
};

export function installPoolPrototypeFix(): void {
  Reflect.construct = patched as Construct;
}

/** Back to the pool as released (bench/fleet/pool.bench-run.ts measures both). */
export function uninstallPoolPrototypeFix(): void {
  Reflect.construct = original;
}
