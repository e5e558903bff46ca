/**
 * Where a job's engine lives, behind one interface. ENGINE_URL set (local
 * development, tests): the one engine process at that URL. Otherwise: the
 * job's own instance of the Container binding, named by the job id.
 *
 * Only `start` may bring an instance up. `stop` acts on a running instance
 * and never starts one (a Container's fetch would), so cancel, the watchdog
 * and completion can call it freely.
 */
import { getContainer } from "@cloudflare/containers";
import { ENGINE_SIGNATURE_HEADER, signEngineRequest } from "#contract";
import { withTimeout } from "../lib/timeout.ts";
import { engineSigningKey } from "../settings.ts";

/** Why a start failed, as the consumer classified it (engine/dispatch.ts); counted for operators. */
export type StartFailureKind =
  | "no_instance"
  | "rate_limited"
  | "start_failed"
  | "proxy_failed"
  | "engine_shutting_down"
  | "engine_error"
  | "unreachable"
  | "misconfigured";

/** A failure kind, or `refused`: the engine's own 4xx to this job's StartJob (the job's fault: no retry). */
export type StartProblem = StartFailureKind | "refused";

/** The engine could not be reached or refused a request that is not a start (a stop). */
export class EngineUnavailableError extends Error {
  override readonly name = "EngineUnavailableError";
}

/**
 * Why a StartJob did not reach a working engine, by what answered. `refused`
 * is the engine's own 4xx to this job's StartJob: the job's fault, retrying
 * cannot help. Every other kind is the platform's or the moment's, and the
 * job retries on the fleet's start budget (fleet-scheduler.ts).
 */
export class EngineStartError extends Error {
  override readonly name = "EngineStartError";
  constructor(
    readonly kind: StartProblem,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads an answer to StartJob that is not the engine's acceptance, by what
 * @cloudflare/containers 0.3.7's containerFetch answers for a start it could
 * not make (lib/container.js): 503 with "There is no Container instance
 * available" for NO_CONTAINER_INSTANCE_ERROR, 429 for RATE_LIMITED_ERROR,
 * 500 "Failed to start container: ..." for every other start error (the
 * account's instance or vCPU limit, a placement failure, a port that did not
 * open within 20 s), 500 "Error proxying request to container" or "Container
 * suddenly disconnected" for a request that reached an instance whose server
 * is gone (one that got SIGTERM is still "running" to the library). The
 * engine itself answers 503 shutting_down after SIGTERM, 401 to a bad
 * signature, 4xx to a StartJob it cannot take.
 */
export function classifyStartAnswer(status: number, text: string): EngineStartError {
  const excerpt = text.slice(0, 160).replace(/\s+/g, " ");
  const say = (kind: StartProblem) => new EngineStartError(kind, `StartJob answered ${status}: ${excerpt}`);
  if (status === 503 && text.startsWith("There is no Container instance available")) return say("no_instance");
  if (status === 429) return say("rate_limited");
  if (status === 500 && text.startsWith("Failed to start container")) return say("start_failed");
  if (status === 500 && (text.startsWith("Error proxying request to container") || text.startsWith("Container suddenly disconnected"))) {
    return say("proxy_failed");
  }
  if (status === 503) return say("engine_shutting_down");
  // A signature the engine rejects is the deployment's problem (its key), not this job's.
  if (status === 401 || status === 403) return say("misconfigured");
  if (status >= 400 && status < 500 && status !== 408) return say("refused");
  return say("engine_error");
}

export interface EngineHost {
  readonly kind: "process" | "container";
  /** POSTs a signed JSON body to the job's engine, starting its instance if needed; throws when nothing answered. */
  start(jobId: string, path: string, body: string, timeoutMs: number): Promise<Response>;
  /**
   * Whether an engine still works on the job: `gone` when its instance has
   * exited, or runs but no longer serves it (after SIGTERM the engine's
   * server is closed). A process engine serves many jobs and cannot tell.
   */
  serving(jobId: string): Promise<"working" | "gone" | "unknown">;
  /**
   * Ends whatever the job's engine still does. `engineReported`: the engine
   * itself reported the end, so a shared process has nothing left to stop.
   * Throws when the stop could not be delivered (the lifecycle redoes it).
   */
  stop(jobId: string, engineReported: boolean): Promise<void>;
  /** Renews a Container's sleep timer (its own outbound calls do not). */
  keepAwake(jobId: string): Promise<void>;
  /**
   * Whether the job's instance has exited, as the platform sees it (the
   * fleet asks when an exit notice is overdue); null when it cannot tell.
   */
  exited(jobId: string): Promise<boolean | null>;
}

const CONTAINER_ORIGIN = "http://engine.container";
const CANCEL_TIMEOUT_MS = 5_000;
const HEALTH_TIMEOUT_MS = 5_000;

/** The Worker's Ed25519 signing key (settings.ts), fetched when a request is signed. */
type SigningKey = () => Promise<CryptoKey>;

/** A request signed for the engine: fresh, with its own nonce, so the engine accepts it once. */
async function signedInit(key: SigningKey, path: string, body: string): Promise<RequestInit> {
  return {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      [ENGINE_SIGNATURE_HEADER]: await signEngineRequest(await key(), { method: "POST", path, body }),
    },
    body,
  };
}

/**
 * One exchange with the engine, bounded by `timeoutMs` from the request to
 * the last byte of its (small, JSON) answer, which is read here.
 */
async function timedExchange(timeoutMs: number, exchange: (signal: AbortSignal) => Promise<Response>): Promise<Response> {
  return withTimeout(timeoutMs, async (signal) => {
    const response = await exchange(signal);
    const body = await response.arrayBuffer();
    return new Response(body.byteLength > 0 ? body : null, { status: response.status, statusText: response.statusText, headers: response.headers });
  });
}

export function processHost(url: string, secret: SigningKey): EngineHost {
  const origin = url.replace(/\/+$/, "");
  return {
    kind: "process",
    async start(_jobId, path, body, timeoutMs) {
      const init = await signedInit(secret, path, body);
      return timedExchange(timeoutMs, (signal) => fetch(`${origin}${path}`, { ...init, signal }));
    },
    async stop(jobId, engineReported) {
      if (engineReported) return;
      const path = `/jobs/${jobId}/cancel`;
      const init = await signedInit(secret, path, "");
      const response = await timedExchange(CANCEL_TIMEOUT_MS, (signal) => fetch(`${origin}${path}`, { ...init, signal }));
      // 404: the engine does not run the job (any more); anything else but a 2xx is a stop not done.
      if (!response.ok && response.status !== 404) throw new EngineUnavailableError(`engine answered ${response.status} to cancel`);
    },
    async keepAwake() {},
    async exited() {
      return null;
    },
    async serving() {
      return "unknown";
    },
  };
}

/** The subset of a ClipEngine stub this module uses (also what a test stand-in implements). */
export interface ContainerStub {
  fetch(request: Request): Promise<Response>;
  stop(signal?: "SIGTERM" | "SIGKILL" | "SIGINT"): Promise<void>;
  renewActivityTimeout(): Promise<void> | void;
  /** ClipEngine.exited(): the runtime's own `ctx.container.running`, not the library's stored state. */
  exited(): Promise<boolean>;
  /** lib Container.getState(): "stopped" / "stopped_with_code" once the process exited. */
  getState(): Promise<{ status: string }>;
}

export interface ContainerNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): ContainerStub;
}

export function containerHost(namespace: ContainerNamespace, secret: SigningKey): EngineHost {
  const stubFor = (jobId: string) => getContainer(namespace as unknown as DurableObjectNamespace<never>, jobId) as unknown as ContainerStub;
  return {
    kind: "container",
    async start(jobId, path, body, timeoutMs) {
      const init = await signedInit(secret, path, body);
      return timedExchange(timeoutMs, (signal) => stubFor(jobId).fetch(new Request(`${CONTAINER_ORIGIN}${path}`, { ...init, signal })));
    },
    async serving(jobId) {
      const stub = stubFor(jobId);
      try {
        const { status } = await stub.getState();
        // lib getState: "stopped" / "stopped_with_code" once the process exited; "healthy" until then, SIGTERM or not.
        if (status === "stopped" || status === "stopped_with_code") return "gone";
        // Running to the platform: the engine itself says whether it still works (GET /health, no signature).
        const response = await timedExchange(HEALTH_TIMEOUT_MS, (signal) => stub.fetch(new Request(`${CONTAINER_ORIGIN}/health`, { signal })));
        if (!response.ok) return "gone";
        const health = (await response.json().catch(() => null)) as { active_jobs?: unknown } | null;
        return typeof health?.active_jobs === "number" && health.active_jobs > 0 ? "working" : "gone";
      } catch (err) {
        console.warn(`asking the engine of ${jobId} failed: ${err instanceof Error ? err.message : String(err)}`);
        return "unknown";
      }
    },
    async stop(jobId) {
      // Container.stop() signals only a running instance; SIGTERM lets the engine clean up.
      await stubFor(jobId).stop("SIGTERM");
    },
    async exited(jobId) {
      try {
        return await stubFor(jobId).exited();
      } catch (err) {
        console.warn(`asking whether ${jobId}'s engine exited failed: ${err instanceof Error ? err.message : String(err)}`);
        return null;
      }
    },
    async keepAwake(jobId) {
      try {
        await stubFor(jobId).renewActivityTimeout();
      } catch (err) {
        console.warn(`renewing the engine container for ${jobId} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  };
}

/**
 * The one place the choice is made. A seam object (not a bare function) so
 * the fleet simulation can put a Container stand-in behind the real
 * containerHost code.
 */
export const engineHosts = {
  select(env: Env): EngineHost {
    const key = () => engineSigningKey(env);
    return env.ENGINE_URL ? processHost(env.ENGINE_URL, key) : containerHost(env.ENGINE as unknown as ContainerNamespace, key);
  },
};

/**
 * Stops the job's engine (never starts one). Throws when the stop could not
 * be delivered; the job's settling redoes it (src/jobs/settle.ts), and the
 * engine also stops on its next callback's 409.
 */
export async function stopEngine(env: Env, jobId: string, engineReported: boolean): Promise<void> {
  await engineHosts.select(env).stop(jobId, engineReported);
}

/** The container's sleep timer only counts requests into it, so each engine report renews it. */
export async function keepEngineAwake(env: Env, jobId: string): Promise<void> {
  await engineHosts.select(env).keepAwake(jobId);
}
