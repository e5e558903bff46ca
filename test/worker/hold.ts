/**
 * Holding one call of a binding until the test lets it go: how the suites
 * make two transitions overlap at a chosen point (one attempt stopped just
 * before its D1 batch, an R2 write landing after a clean-up) without timing.
 */

/** A point one call waits at: `reached` resolves when it arrives, `release()` lets it go on. */
export class Gate {
  readonly reached: Promise<void>;
  private arrive!: () => void;
  private readonly opened: Promise<void>;
  private open!: () => void;

  constructor() {
    this.reached = new Promise((resolve) => (this.arrive = resolve));
    this.opened = new Promise((resolve) => (this.open = resolve));
  }

  /** Called by the held call: signals its arrival and waits. */
  async pass(): Promise<void> {
    this.arrive();
    await this.opened;
  }

  release(): void {
    this.open();
  }
}

type Method = (...args: never[]) => unknown;

/** `target` whose first call of `method` waits at `gate` before it runs (later calls run at once). */
export function holdFirst<T extends object>(target: T, method: keyof T, gate: Gate): T {
  let held = false;
  return new Proxy(target, {
    get(object, prop) {
      const value = Reflect.get(object, prop) as unknown;
      if (typeof value !== "function") return value;
      const bound = (value as Method).bind(object) as (...args: unknown[]) => unknown;
      if (prop !== method) return bound;
      return async (...args: unknown[]) => {
        if (!held) {
          held = true;
          await gate.pass();
        }
        return bound(...args);
      };
    },
  });
}

/**
 * A bucket whose every `put` reads its body as it arrives, then waits at
 * `gate` before writing: the writes of a completion attempt land only once
 * the test has done what must come first.
 */
export function holdPuts(bucket: R2Bucket, gate: Gate): R2Bucket {
  return new Proxy(bucket, {
    get(object, prop) {
      const value = Reflect.get(object, prop) as unknown;
      if (typeof value !== "function") return value;
      const bound = (value as Method).bind(object) as (...args: unknown[]) => unknown;
      if (prop !== "put") return bound;
      return async (key: string, body: ReadableStream | ArrayBuffer | string | null, options?: R2PutOptions) => {
        const bytes = body === null ? null : await new Response(body).arrayBuffer();
        await gate.pass();
        return object.put(key, bytes, options);
      };
    },
  });
}
