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
import { engineSigningKey } from "../settings";

/** The platform has no instance free for the job right now (or the engine is shutting down): try later. */
export class EngineBusyError extends Error {
  override readonly name = "EngineBusyError";
}

/** The engine could not be reached or refused the request. */
export class EngineUnavailableError extends Error {
  override readonly name = "EngineUnavailableError";
}

export interface EngineHost {
  readonly kind: "process" | "container";
  /** POSTs a signed JSON body to the job's engine, starting its instance if needed. */
  start(jobId: string, path: string, body: string, timeoutMs: number): Promise<Response>;
  /**
   * Ends whatever the job's engine still does. `engineReported`: the engine
   * itself reported the end, so a shared process has nothing left to stop.
   * Throws when the stop could not be delivered (the lifecycle redoes it).
   */
  stop(jobId: string, engineReported: boolean): Promise<void>;
  /** Renews a Container's sleep timer (its own outbound calls do not). */
  keepAwake(jobId: string): Promise<void>;
}

const CONTAINER_ORIGIN = "http://engine.container";
const CANCEL_TIMEOUT_MS = 5_000;

/** The Worker's Ed25519 signing key (settings.ts), fetched when a request is signed. */
type SigningKey = () => Promise<CryptoKey>;

/** A request signed for the engine: fresh, with its own nonce, so the engine accepts it once. */
async function signedInit(key: SigningKey, path: string, body: string, timeoutMs: number): Promise<RequestInit> {
  return {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      [ENGINE_SIGNATURE_HEADER]: await signEngineRequest(await key(), { method: "POST", path, body }),
    },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  };
}

/** A platform answer that means "no instance for you now", per @cloudflare/containers' containerFetch. */
function isNoInstanceAnswer(response: Response): boolean {
  return response.status === 503 || response.status === 429;
}

export function processHost(url: string, secret: SigningKey): EngineHost {
  const origin = url.replace(/\/+$/, "");
  return {
    kind: "process",
    async start(_jobId, path, body, timeoutMs) {
      return fetch(`${origin}${path}`, await signedInit(secret, path, body, timeoutMs));
    },
    async stop(jobId, engineReported) {
      if (engineReported) return;
      const path = `/jobs/${jobId}/cancel`;
      const response = await fetch(`${origin}${path}`, await signedInit(secret, path, "", CANCEL_TIMEOUT_MS));
      await response.body?.cancel();
      // 404: the engine does not run the job (any more); anything else but a 2xx is a stop not done.
      if (!response.ok && response.status !== 404) throw new EngineUnavailableError(`engine answered ${response.status} to cancel`);
    },
    async keepAwake() {},
  };
}

/** The subset of a ClipEngine stub this module uses (also what a test stand-in implements). */
export interface ContainerStub {
  fetch(request: Request): Promise<Response>;
  stop(signal?: "SIGTERM" | "SIGKILL" | "SIGINT"): Promise<void>;
  renewActivityTimeout(): Promise<void> | void;
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
      const response = await stubFor(jobId).fetch(new Request(`${CONTAINER_ORIGIN}${path}`, await signedInit(secret, path, body, timeoutMs)));
      if (isNoInstanceAnswer(response)) {
        const text = await response.text().catch(() => "");
        throw new EngineBusyError(`no engine instance available (${response.status}): ${text.slice(0, 120)}`);
      }
      return response;
    },
    async stop(jobId) {
      // Container.stop() signals only a running instance; SIGTERM lets the engine clean up.
      await stubFor(jobId).stop("SIGTERM");
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
