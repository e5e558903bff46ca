/**
 * A stand-in for the ClipEngine Container binding, modelled on
 * @cloudflare/containers 0.3.7 (lib/container.js), driven by a simulated
 * clock. What it reproduces:
 *
 * - getContainer(binding, name) -> binding.get(binding.idFromName(name)): one
 *   instance per name.
 * - fetch(): a stopped instance is started first (startAndWaitForPorts). When
 *   the account's `max_instances` are all in use (starting, running or still
 *   stopping) the start fails and fetch answers 503 with the library's "There
 *   is no Container instance available" text. A started instance takes
 *   `startDelay` before its server answers; every proxied request renews its
 *   activity timeout.
 * - stop(signal): signals only a running instance (never starts one); the
 *   process exits `stopDelay` later and its slot is free only then.
 * - renewActivityTimeout(); sleepAfter: an instance idle that long is stopped
 *   (onActivityExpired -> stop()).
 * - redeploy(): every running instance gets SIGTERM, as a rollout does.
 *
 * The process inside is SimEngine (simulation.ts), which verifies the signed
 * StartJob with the Worker's public key, and refuses replays, as the real engine does.
 */
export type InstanceState = "stopped" | "starting" | "running" | "stopping";

export interface SimProcess {
  /** Handles a request that reached the running server. */
  handle(request: Request): Promise<Response>;
  /** SIGTERM: the engine reports its job interrupted (if any) and exits. */
  terminate(): Promise<void>;
}

interface Instance {
  name: string;
  state: InstanceState;
  startedAt: number;
  stoppedAt: number;
  activityDeadline: number;
  process: SimProcess | null;
  stopReason: "worker" | "sleep" | "redeploy" | null;
}

export interface InstanceRecord {
  name: string;
  startedAt: number;
  stoppedAt: number | null;
  stopReason: string | null;
}

const NO_INSTANCE_TEXT =
  "There is no Container instance available at this time.\nThis is likely because you have reached your max concurrent instance count (set in wrangler config) or are you currently provisioning the Container.";

export class ContainerStandIn {
  private readonly instances = new Map<string, Instance>();
  readonly history: InstanceRecord[] = [];
  /** Starts refused because max_instances were in use. */
  refusedStarts = 0;
  /** Highest number of instances in use (starting, running or stopping) at once. */
  peakInUse = 0;
  private inUseNow = 0;

  constructor(
    private readonly clock: { now(): number; at(time: number, action: () => Promise<void> | void): void },
    private readonly options: {
      maxInstances: number;
      startDelay: number;
      stopDelay: number;
      sleepAfter: number;
      spawn: (name: string) => SimProcess;
    },
  ) {}

  inUse(): number {
    return [...this.instances.values()].filter((i) => i.state !== "stopped").length;
  }

  running(): string[] {
    return [...this.instances.values()].filter((i) => i.state !== "stopped").map((i) => i.name);
  }

  /** The binding: idFromName/get, as a DurableObjectNamespace is used by getContainer. */
  namespace() {
    return {
      idFromName: (name: string) => ({ name, toString: () => name, equals: () => false }) as unknown as DurableObjectId,
      get: (id: DurableObjectId) => this.stub(id.name ?? String(id)),
    };
  }

  private instance(name: string): Instance {
    let instance = this.instances.get(name);
    if (!instance) {
      instance = { name, state: "stopped", startedAt: 0, stoppedAt: 0, activityDeadline: 0, process: null, stopReason: null };
      this.instances.set(name, instance);
    }
    return instance;
  }

  private stub(name: string) {
    return {
      fetch: (request: Request) => this.fetch(name, request),
      stop: async (signal: "SIGTERM" | "SIGKILL" | "SIGINT" = "SIGTERM") => this.signal(name, signal, "worker"),
      renewActivityTimeout: () => this.renew(this.instance(name)),
    };
  }

  private renew(instance: Instance): void {
    instance.activityDeadline = this.clock.now() + this.options.sleepAfter;
    const deadline = instance.activityDeadline;
    this.clock.at(deadline, () => {
      if (instance.state === "running" && instance.activityDeadline <= this.clock.now() && deadline === instance.activityDeadline) {
        return this.signal(instance.name, "SIGTERM", "sleep");
      }
    });
  }

  private async fetch(name: string, request: Request): Promise<Response> {
    const instance = this.instance(name);
    if (instance.state === "stopping") return new Response(NO_INSTANCE_TEXT, { status: 503 });
    if (instance.state === "stopped") {
      if (this.inUse() >= this.options.maxInstances) {
        this.refusedStarts += 1;
        return new Response(NO_INSTANCE_TEXT, { status: 503 });
      }
      instance.state = "starting";
      instance.startedAt = this.clock.now();
      instance.stopReason = null;
      instance.process = this.options.spawn(name);
      this.inUseNow = this.inUse();
      this.peakInUse = Math.max(this.peakInUse, this.inUseNow);
      this.history.push({ name, startedAt: instance.startedAt, stoppedAt: null, stopReason: null });
      // startAndWaitForPorts: the request is proxied once the port answers.
      this.clock.at(instance.startedAt + this.options.startDelay, () => {
        if (instance.state === "starting") instance.state = "running";
      });
    }
    this.renew(instance);
    return instance.process!.handle(request);
  }

  private async signal(name: string, signal: string, reason: "worker" | "sleep" | "redeploy"): Promise<void> {
    const instance = this.instances.get(name);
    // Container.stop() signals only a running container.
    if (!instance || (instance.state !== "running" && instance.state !== "starting")) return;
    instance.state = "stopping";
    instance.stopReason = reason;
    const process = instance.process;
    const exitAfter = signal === "SIGKILL" ? 0 : this.options.stopDelay;
    if (signal !== "SIGKILL" && process) await process.terminate();
    this.clock.at(this.clock.now() + exitAfter, () => {
      instance.state = "stopped";
      instance.stoppedAt = this.clock.now();
      instance.process = null;
      const record = [...this.history].reverse().find((r) => r.name === name && r.stoppedAt === null);
      if (record) {
        record.stoppedAt = instance.stoppedAt;
        record.stopReason = reason;
      }
    });
  }

  /** A rollout: SIGTERM to every running instance. */
  async redeploy(): Promise<void> {
    for (const instance of [...this.instances.values()]) {
      if (instance.state === "running" || instance.state === "starting") await this.signal(instance.name, "SIGTERM", "redeploy");
    }
  }

  /** Instance-seconds used so far (stopped instances, plus running ones up to now). */
  instanceSeconds(): number {
    const now = this.clock.now();
    return this.history.reduce((sum, r) => sum + ((r.stoppedAt ?? now) - r.startedAt), 0);
  }
}
