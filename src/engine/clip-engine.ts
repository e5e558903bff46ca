/**
 * The clip engine as a Cloudflare Container (image: container/Dockerfile).
 * One instance per job (dispatch.ts names it by job id). The engine's
 * callbacks go to http://clipjobs.internal, which the outbound handler below
 * answers with the engine channel's own app (channel-app.ts) and the
 * Worker's bindings: nothing on the channel is publicly routed. (Outbound interception needs the Worker entrypoint to
 * export ContainerProxy from @cloudflare/containers.)
 */
import { Container, type OutboundHandler, type StopParams } from "@cloudflare/containers";
import { engineChannelApp } from "./channel-app.ts";
import { CALLBACK_PREFIX, ENGINE_PORT } from "#contract";
import { engineExited } from "../jobs/engine-exit.ts";
import { callbackBase, engineVerifyKey, INTERNAL_CALLBACK_HOST } from "../settings.ts";

/**
 * The engine's whole environment. Its settings come from here, never from a
 * request: the public key that verifies the Worker's signed requests (it
 * cannot sign: the Worker keeps the private half), where to call back, and
 * (always off here) private source hosts. No secret of the Worker is in it:
 * per-job callback tokens arrive with each StartJob and live in memory. It
 * listens on all interfaces inside the container, where only the binding
 * reaches it.
 */
export async function engineEnvironment(env: Env): Promise<Record<string, string>> {
  // The operator's proxy for platform downloads, when set (a secret: its URL may hold credentials).
  const platformProxy = env.PLATFORM_PROXY_URL?.trim() ?? "";
  return {
    ENGINE_VERIFY_KEY: await engineVerifyKey(env),
    CALLBACK_BASE: callbackBase(env),
    ALLOW_PRIVATE_SOURCES: "false",
    HOST: "0.0.0.0",
    ...(platformProxy === "" ? {} : { PLATFORM_PROXY_URL: platformProxy }),
  };
}

export class ClipEngine extends Container {
  override defaultPort = ENGINE_PORT;
  /**
   * The Worker stops an instance as soon as its job ends and renews activity
   * on every engine report, so this only bounds the idle time of an instance
   * whose job vanished: a little over the watchdog's silence timeout.
   */
  override sleepAfter = "5m";
  /** Sources are downloaded from the internet. */
  override enableInternet = true;

  constructor(ctx: DurableObjectState<{}>, env: Env) {
    super(ctx, env);
    // Derived before the object takes any request (the instance starts on one).
    void ctx.blockConcurrencyWhile(async () => {
      this.envVars = await engineEnvironment(env);
    });
  }

  /**
   * The process exited (the library calls this once it is gone, before any
   * new start of this instance): the fleet frees its slot only now, since
   * the platform counts a stopping instance against max_instances.
   */
  override async onStop(_params: StopParams): Promise<void> {
    const jobId = this.ctx.id.name;
    if (!jobId) return;
    try {
      await engineExited(this.env, jobId);
    } catch (err) {
      // The fleet's grace for stopping instances frees the slot anyway.
      console.error(`reporting the exit of ${jobId}'s engine failed`, err);
    }
  }

  /**
   * Whether the container process is gone, from the runtime itself
   * (`ctx.container.running`). The library's stored state (getState) stays
   * "healthy" after an exit until its alarm resyncs it and calls onStop, so
   * the fleet asks this when an exit notice is overdue. Starts nothing.
   */
  async exited(): Promise<boolean> {
    return !(this.ctx.container?.running ?? false);
  }

  // Assigned in a static block, not declared as a static field: the base class
  // registers handlers through its `outboundByHost` setter, which a class field
  // (define semantics under ES2022) would shadow without calling.
  static {
    const handlers: Record<string, OutboundHandler> = {
      [INTERNAL_CALLBACK_HOST]: (request, env) => {
        const { pathname } = new URL(request.url);
        if (!pathname.startsWith(`${CALLBACK_PREFIX}/`)) return new Response("Not found", { status: 404 });
        return engineChannelApp.fetch(request, env);
      },
    };
    this.outboundByHost = handlers;
  }
}
