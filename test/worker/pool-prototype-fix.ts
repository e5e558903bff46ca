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
 * (measured: 0.9 ms a call at 201 objects, 102 ms at 1,401, a stack
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
 * each SELF.fetch made every later one slower (a health check took
 * 4 ms at first and about 100 ms after 900 requests, so a test file's request
 * cost grew with the requests sent before it). WorkerEntrypoint and
 * WorkflowEntrypoint wrappers get the same treatment.
 *
 * Second, the cost of every Durable Object call: each call through the
 * pool's wrapper (RPC method, fetch, alarm) first runs the wrapper's
 * `[kEnsureInstance]()`, which parses the pool's serialised options and
 * imports the Worker's main module again through Vite's module runner: a
 * fetch to the pool's runner object plus a `resolveId` round trip over the
 * WebSocket to the Vitest process in Node. Only then does it reach the one
 * instance it made the first time. A `vitest run` never invalidates the
 * module (that check matters in watch mode only), so the answer cannot
 * change for a given object: the first answer is kept per wrapper instance
 * (a reset object is a new wrapper, and starts afresh; a failed first call
 * is not kept). It was measured as about a quarter of the fleet
 * simulation's CPU (a 650-job run: 49.9 s of CPU before, 38.1 s after).
 */
import { DurableObject, WorkerEntrypoint, WorkflowEntrypoint } from "cloudflare:workers";

type Construct = typeof Reflect.construct;

const original: Construct = Reflect.construct;
const firstProxy = new WeakMap<object, object>();
/** The base classes the pool wraps with createProxyPrototypeClass. */
const WRAPPED_BASES = new Set<unknown>([DurableObject, WorkerEntrypoint, WorkflowEntrypoint]);

/** Wrapper classes whose `[kEnsureInstance]` already keeps its first answer. */
const memoized = new WeakSet<object>();

/** Makes the Durable Object wrapper's `[kEnsureInstance]()` (found by its symbol's description) answer once per object. */
function keepFirstInstance(wrapper: { prototype: object }): void {
  if (memoized.has(wrapper)) return;
  memoized.add(wrapper);
  const prototype = wrapper.prototype as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(prototype).find((symbol) => symbol.description === "kEnsureInstance");
  const ensure = key === undefined ? undefined : prototype[key];
  if (key === undefined || typeof ensure !== "function") return;
  const answers = new WeakMap<object, Promise<unknown>>();
  prototype[key] = function (this: object): Promise<unknown> {
    let answer = answers.get(this);
    if (answer === undefined) {
      answer = (ensure as (this: object) => Promise<unknown>).call(this);
      answers.set(this, answer);
      answer.catch(() => answers.delete(this));
    }
    return answer;
  };
}

const patched = (target: Function, args: ArrayLike<unknown>, newTarget?: Function): object => {
  if (WRAPPED_BASES.has(target) && newTarget !== undefined && newTarget !== target) {
    const wrapper = newTarget as { prototype: object };
    if (target === DurableObject) keepFirstInstance(wrapper);
    const first = firstProxy.get(newTarget);
    if (first === undefined) firstProxy.set(newTarget, wrapper.prototype);
    else wrapper.prototype = first;
  }
  return newTarget === undefined ? original(target, args) : original(target, args, newTarget);
};

export function installPoolPrototypeFix(): void {
  Reflect.construct = patched as Construct;
}

/**
 * Back to the pool's prototype chain as released (bench/fleet/pool.bench-run.ts measures both); a wrapper
 * class already seen keeps its first-instance answer.
 */
export function uninstallPoolPrototypeFix(): void {
  Reflect.construct = original;
}
