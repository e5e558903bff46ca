/**
 * A stand-in for the ClipEngine Container binding that fails the way
 * `@cloudflare/containers` 0.3.7 and the platform fail. Every behaviour names
 * where it comes from: "lib" is node_modules/@cloudflare/containers/dist/lib/
 * container.js of 0.3.7 (function and constant names, which survive a
 * rebuild better than line numbers); "docs" and "issue" are the pages and
 * threads listed in docs/fleet.md "The platform, as it behaves".
 *
 * What `getContainer(ENGINE, jobId).fetch()` does (lib containerFetch):
 * - An instance that is running and healthy gets the request proxied. One
 *   that got SIGTERM is still "running" to the library (container.running
 *   stays true until the process exits; lib stop() only signals), so the
 *   request still reaches it and, its server being closed, comes back as
 *   500 "Error proxying request to container: ..." (lib containerFetch,
 *   catch branch).
 * - Otherwise startAndWaitForPorts: the library asks for an instance and
 *   polls for about 8 s (TIMEOUT_TO_GET_CONTAINER_MS = 8_000, polls of
 *   INSTANCE_POLL_INTERVAL_MS = 300). Refusals therefore take ~8 s:
 *   - "no container instance that can be provided" (NO_CONTAINER_INSTANCE_ERROR)
 *     is the only error answered 503, with the library's text; seen below the
 *     cap too (issue cloudflare/containers#45: "Error: There is no container
 *     instance that can be provided to this Durable Object, try again later").
 *   - "you are requesting too many containers per second"
 *     (RATE_LIMITED_ERROR) is answered 429 with the error's message.
 *   - every other start error is answered 500 "Failed to start container: "
 *     + message (lib containerFetch; doStartContainer's handleError rethrows
 *     any monitor error that is not the no-instance one). At the account's
 *     instance limit others saw "Failed to start container: Maximum number of
 *     running container instances exceeded" (issue civictechdc/spicy-regs#163,
 *     also for the account vCPU quota, PR Mirascope/mirascope#2573); placement
 *     failures happen below max_instances too (issue
 *     cloudflare/sandbox-sdk#794: 14 of 50 starts failed at half the cap).
 * - A granted instance blocks the request until its port answers: up to
 *   TIMEOUT_TO_GET_PORTS_MS = 20_000 in all (lib startAndWaitForPorts ->
 *   waitForPort). An image slower than that gets 500 "Failed to start
 *   container: ..." while the instance keeps booting and keeps its slot; the
 *   next request waits for the port again.
 * - Instances in use count against `max_instances` and against the account's
 *   1,500 concurrent vCPU (docs containers/platform/limits: standard-4 is
 *   4 vCPU, so at most 375 standard-4 at once, whatever max_instances says).
 *
 * Stopping (lib stop): signals only a running container and never starts one.
 * The process exits when it is done (our engine: seconds after SIGTERM), and
 * a rollout gives up to 15 minutes before SIGKILL (docs
 * containers/platform-details/rollouts); until it exits the instance holds
 * its slot. On exit the library calls the class's onStop hook (lib
 * syncPendingStoppedEvents -> callOnStop): the stand-in calls ClipEngine's
 * real onStop, unless that notification is lost (a Durable Object reset
 * between the exit and the hook: docs durable-objects code updates).
 *
 * sleepAfter (lib alarm -> isActivityExpired -> onActivityExpired -> stop):
 * an idle instance gets SIGTERM; each proxied request renews the timer.
 *
 * Rollouts (docs rollouts): Worker code is live at once; instances are
 * replaced in steps (default 10% then the remaining 90%), each getting
 * SIGTERM and up to 15 minutes before SIGKILL while still counting against
 * the limit.
 */
import type { SimClock } from "./sim-clock.ts";

/** lib NO_CONTAINER_INSTANCE_ERROR, as containerFetch answers it (503). */
export const NO_INSTANCE_TEXT =
  "There is no Container instance available at this time.\nThis is likely because you have reached your max concurrent instance count (set in wrangler config) or are you currently provisioning the Container.\nIf you are deploying your Container for the first time, check your dashboard to see provisioning status, this may take a few minutes.";
/** lib RATE_LIMITED_ERROR: containerFetch answers 429 with the error's own message. */
export const RATE_LIMITED_TEXT = "You are requesting too many containers per second";
/** The platform's refusal at the instance or vCPU limit (issues above), wrapped by containerFetch into a 500. */
export const LIMIT_EXCEEDED_TEXT = "Failed to start container: Maximum number of running container instances exceeded";
/** waitForPort's last error when the port never answered within TIMEOUT_TO_GET_PORTS_MS (500). */
export const NOT_LISTENING_TEXT = "Failed to start container: The container is not listening in the TCP address 10.0.0.1:8080";
/** A request proxied to an instance whose server closed after SIGTERM (lib containerFetch catch branch). */
export const PROXY_FAILED_TEXT = "Error proxying request to container: The container is not listening in the TCP address 10.0.0.1:8080";

/** lib TIMEOUT_TO_GET_CONTAINER_MS: how long the library keeps asking for an instance. */
export const INSTANCE_GET_SECONDS = 8;
/** lib TIMEOUT_TO_GET_PORTS_MS: how long a start waits for the port in all. */
export const PORT_READY_SECONDS = 20;
/** docs rollouts: SIGTERM, then SIGKILL after 15 minutes. */
export const ROLLOUT_GRACE_SECONDS = 15 * 60;

export type InstanceState = "stopped" | "booting" | "healthy" | "stopping";
export type StopReason = "worker" | "sleep" | "rollout";

export interface SimProcess {
  /** Handles a request that reached the running server. */
  handle(request: Request): Promise<Response>;
  /** SIGTERM: the engine reports its job interrupted (if any) and closes its server. */
  terminate(): Promise<void>;
}

/** The platform and library behaviour the stand-in plays; every knob has the documented default. */
export interface PlatformOptions {
  /** `max_instances` of the [[containers]] entry. */
  maxInstances: number;
  /** Account concurrent vCPU (docs: 1,500) and the instance type's vCPU (standard-4: 4). */
  accountVcpu?: number;
  instanceVcpu?: number;
  /** vCPU used by the account's other container applications (not ours to schedule). */
  otherVcpu?: () => number;
  /** Instance starts per second before RATE_LIMITED_ERROR (the platform does not publish its figure). */
  startsPerSecond?: number;
  /** Chance that a start below every limit is refused anyway (placement). */
  placementRefusal?: number;
  /** Of refusals, the share answered 503 no-instance (the rest: 500 limit exceeded). */
  refusalsAs503?: number;
  /** Seconds from a granted start until the engine's port answers. */
  bootSeconds: () => number;
  /** Seconds from SIGTERM until the process exits (capped at the 15-minute SIGKILL). */
  exitSeconds: (reason: StopReason) => number;
  /** Chance that ClipEngine.onStop never runs for an exit. */
  onStopLost?: number;
  /** `sleepAfter` of the class, seconds. */
  sleepAfter: number;
  random: () => number;
  spawn: (name: string) => SimProcess;
  /** ClipEngine's onStop, as the library calls it on the instance's Durable Object. */
  onStop?: (name: string, params: { exitCode: number; reason: "exit" | "runtime_signal" }) => Promise<void> | void;
}

interface Instance {
  name: string;
  state: InstanceState;
  /** Simulated time the port answers (while booting). */
  readyAt: number;
  startedAt: number;
  activityDeadline: number;
  process: SimProcess | null;
  version: number;
  record: InstanceRecord | null;
  exitTimer: number;
}

export interface InstanceRecord {
  name: string;
  startedAt: number;
  stoppedAt: number | null;
  stopReason: StopReason | null;
}

export interface StartRefusals {
  /** 503 no-instance (at the limit or placement). */
  noInstance: number;
  /** 500 limit exceeded (max_instances or vCPU) or placement. */
  limitExceeded: number;
  /** 429 too many starts per second. */
  rateLimited: number;
  /** 500 port not ready within 20 s. */
  notListening: number;
  /** 500 request proxied to an instance that got SIGTERM. */
  proxiedToStopping: number;
  /** Refusals with a free slot below every limit (placement). */
  placement: number;
}

export class ContainerStandIn {
  private readonly instances = new Map<string, Instance>();
  readonly history: InstanceRecord[] = [];
  readonly refusals: StartRefusals = { noInstance: 0, limitExceeded: 0, rateLimited: 0, notListening: 0, proxiedToStopping: 0, placement: 0 };
  /** Highest number of instances holding a slot (booting, healthy or stopping) at once. */
  peakInUse = 0;
  /** Starts refused because a limit was reached (not placement, not rate). */
  refusedAtLimit = 0;
  private inUseNow = 0;
  private version = 1;
  private recentStarts: number[] = [];
  onStopLostCount = 0;

  constructor(
    private readonly clock: SimClock,
    private readonly options: PlatformOptions,
  ) {}

  /** The platform's limit: max_instances and the account's vCPU, whichever is lower. */
  limit(): number {
    const vcpu = this.options.accountVcpu ?? 1500;
    const per = this.options.instanceVcpu ?? 4;
    const other = this.options.otherVcpu?.() ?? 0;
    return Math.min(this.options.maxInstances, Math.floor(Math.max(0, vcpu - other) / per));
  }

  inUse(): number {
    return this.inUseNow;
  }

  /** Instances holding a slot now, by name. */
  running(): string[] {
    return [...this.instances.values()].filter((i) => i.state !== "stopped").map((i) => i.name);
  }

  stateOf(name: string): InstanceState {
    return this.instances.get(name)?.state ?? "stopped";
  }

  /** The binding as getContainer uses it: idFromName/get. */
  namespace() {
    return {
      idFromName: (name: string) => ({ name, toString: () => name, equals: () => false }) as unknown as DurableObjectId,
      get: (id: DurableObjectId) => this.stub(id.name ?? String(id)),
    };
  }

  private instance(name: string): Instance {
    let instance = this.instances.get(name);
    if (!instance) {
      instance = { name, state: "stopped", readyAt: 0, startedAt: 0, activityDeadline: 0, process: null, version: 0, record: null, exitTimer: 0 };
      this.instances.set(name, instance);
    }
    return instance;
  }

  private stub(name: string) {
    return {
      fetch: (request: Request) => this.fetch(name, request),
      stop: async (signal: "SIGTERM" | "SIGKILL" | "SIGINT" = "SIGTERM") => this.signal(this.instance(name), signal, "worker"),
      renewActivityTimeout: () => this.renew(this.instance(name)),
      // ClipEngine.exited: ctx.container.running is false once the process exited (and before any start).
      exited: async () => this.instance(name).state === "stopped",
      // lib getState: "healthy" from port-ready until the process exits (nothing sets "stopping" on a signal).
      getState: async () => {
        const state = this.instance(name).state;
        const status = state === "stopped" ? "stopped_with_code" : state === "booting" ? "running" : "healthy";
        return { status, lastChange: this.clock.epochMs() };
      },
    };
  }

  private renew(instance: Instance): void {
    instance.activityDeadline = this.clock.now() + this.options.sleepAfter;
    const deadline = instance.activityDeadline;
    this.clock.at(deadline, () => {
      if (instance.state === "healthy" && instance.activityDeadline === deadline) return this.signal(instance, "SIGTERM", "sleep");
    });
  }

  private async fetch(name: string, request: Request): Promise<Response> {
    const instance = this.instance(name);
    if (instance.state === "stopping") {
      this.refusals.proxiedToStopping += 1;
      return new Response(PROXY_FAILED_TEXT, { status: 500 });
    }
    if (instance.state === "stopped") {
      const refusal = await this.requestInstance(instance);
      if (refusal) return refusal;
    }
    if (instance.state === "booting") {
      // startAndWaitForPorts: the request waits for the port, 20 s at most per request.
      const wait = Math.max(0, instance.readyAt - this.clock.now());
      if (wait > PORT_READY_SECONDS) {
        await this.clock.sleep(PORT_READY_SECONDS);
        this.refusals.notListening += 1;
        return new Response(NOT_LISTENING_TEXT, { status: 500 });
      }
      await this.clock.sleep(wait);
      // A SIGTERM while it booted: the request now meets a closing server.
      if (instance.state !== "booting" && instance.state !== "healthy") {
        this.refusals.proxiedToStopping += 1;
        return new Response(PROXY_FAILED_TEXT, { status: 500 });
      }
      instance.state = "healthy";
    }
    this.renew(instance);
    return instance.process!.handle(request);
  }

  /** doStartContainer: an instance, or the refusal containerFetch answers. */
  private async requestInstance(instance: Instance): Promise<Response | null> {
    const now = this.clock.now();
    const random = this.options.random;
    this.recentStarts = this.recentStarts.filter((t) => t > now - 1);
    const perSecond = this.options.startsPerSecond ?? Infinity;
    if (this.recentStarts.length >= perSecond) {
      // The monitor rejects at once with RATE_LIMITED_ERROR; handleError rethrows it on the next poll.
      await this.clock.sleep(0.3);
      this.refusals.rateLimited += 1;
      return new Response(RATE_LIMITED_TEXT, { status: 429 });
    }
    this.recentStarts.push(now);
    const atLimit = this.inUseNow >= this.limit();
    const placementRefused = !atLimit && random() < (this.options.placementRefusal ?? 0);
    if (atLimit || placementRefused) {
      // The library keeps polling for an instance for TIMEOUT_TO_GET_CONTAINER_MS before it gives up.
      await this.clock.sleep(INSTANCE_GET_SECONDS);
      if (atLimit) this.refusedAtLimit += 1;
      else this.refusals.placement += 1;
      if (random() < (this.options.refusalsAs503 ?? 0.5)) {
        this.refusals.noInstance += 1;
        return new Response(NO_INSTANCE_TEXT, { status: 503 });
      }
      this.refusals.limitExceeded += 1;
      return new Response(LIMIT_EXCEEDED_TEXT, { status: 500 });
    }
    // Granted: the slot is held from here, while the image boots.
    instance.state = "booting";
    instance.startedAt = now;
    instance.readyAt = now + this.options.bootSeconds();
    instance.version = this.version;
    instance.process = this.options.spawn(instance.name);
    instance.record = { name: instance.name, startedAt: now, stoppedAt: null, stopReason: null };
    this.history.push(instance.record);
    this.inUseNow += 1;
    this.peakInUse = Math.max(this.peakInUse, this.inUseNow);
    return null;
  }

  private async signal(instance: Instance, signal: "SIGTERM" | "SIGKILL" | "SIGINT", reason: StopReason): Promise<void> {
    // lib stop(): `if (this.container.running) this.container.signal(...)`: never starts one, and a
    // second signal to a stopping instance changes nothing but SIGKILL's immediacy.
    if (instance.state === "stopped") return;
    if (instance.state === "stopping" && signal !== "SIGKILL") return;
    const first = instance.state !== "stopping";
    instance.state = "stopping";
    if (instance.record && first) instance.record.stopReason = reason;
    const process = instance.process;
    const exitIn = signal === "SIGKILL" ? 0 : Math.min(ROLLOUT_GRACE_SECONDS, Math.max(0, this.options.exitSeconds(reason)));
    const timer = ++instance.exitTimer;
    this.clock.at(this.clock.now() + exitIn, () => (instance.exitTimer === timer ? this.exit(instance) : undefined));
    if (first && signal !== "SIGKILL" && process) await process.terminate();
  }

  private async exit(instance: Instance): Promise<void> {
    if (instance.state === "stopped") return;
    instance.state = "stopped";
    instance.process = null;
    this.inUseNow -= 1;
    if (instance.record) instance.record.stoppedAt = this.clock.now();
    instance.record = null;
    if (!this.options.onStop) return;
    if (this.options.random() < (this.options.onStopLost ?? 0)) {
      this.onStopLostCount += 1;
      return;
    }
    await this.options.onStop(instance.name, { exitCode: 0, reason: "exit" });
  }

  /**
   * A rollout (docs rollouts): instances running the old version are replaced
   * in steps, each instance getting SIGTERM (and SIGKILL 15 minutes later);
   * the next step starts once the previous step's instances have exited.
   * Instances started after the rollout began run the new version.
   */
  rollout(steps: number[] = [10, 90]): Promise<void> {
    const old = this.version;
    this.version += 1;
    const targets = [...this.instances.values()].filter((i) => i.state !== "stopped" && i.version === old);
    let offset = 0;
    const runStep = async (index: number): Promise<void> => {
      if (index >= steps.length) return;
      const count = index === steps.length - 1 ? targets.length - offset : Math.ceil((targets.length * steps[index]!) / 100);
      const batch = targets.slice(offset, offset + count);
      offset += count;
      for (const instance of batch) await this.signal(instance, "SIGTERM", "rollout");
      const waitForExit = (): void => {
        if (batch.every((i) => i.state === "stopped" || i.version !== old)) this.clock.spawn(() => runStep(index + 1));
        else this.clock.at(this.clock.now() + 5, waitForExit);
      };
      waitForExit();
    };
    return runStep(0);
  }

  /** Instance-seconds used so far (stopped instances, plus the ones holding a slot up to now). */
  instanceSeconds(): number {
    const now = this.clock.now();
    return this.history.reduce((sum, r) => sum + ((r.stoppedAt ?? now) - r.startedAt), 0);
  }
}
