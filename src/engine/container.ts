/**
 * The clip engine as a Cloudflare Container (image: container/Dockerfile).
 * One instance per job (dispatch.ts names it by job id). The engine's
 * callbacks go to http://clipjobs.internal, which the outbound handler below
 * answers with the Worker's own app and bindings: nothing on the channel is
 * publicly routed. (Outbound interception needs the Worker entrypoint to
 * export ContainerProxy from @cloudflare/containers.)
 */
import { Container, type OutboundHandler, type StopParams } from "@cloudflare/containers";
import { app } from "../app";
import { CALLBACK_PREFIX, ENGINE_PORT } from "#contract";
import { engineExited } from "../fleet/engine-exit";
import { callbackBase, INTERNAL_CALLBACK_HOST } from "../settings";

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
    // The engine's settings come from its environment, never from a request:
    // the key that verifies the Worker's signed requests, where to call back,
    // and (always off here) private source hosts. It listens on all interfaces
    // inside the container, where only the binding reaches it.
    this.envVars = {
      ENGINE_SECRET: env.ENGINE_SECRET,
      CALLBACK_BASE: callbackBase(env),
      ALLOW_PRIVATE_SOURCES: "false",
      HOST: "0.0.0.0",
    };
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

  // Assigned in a static block, not declared as a static field: the base class
  // registers handlers through its `outboundByHost` setter, which a class field
  // (define semantics under ES2022) would shadow without calling.
  static {
    const handlers: Record<string, OutboundHandler> = {
      [INTERNAL_CALLBACK_HOST]: (request, env) => {
        const { pathname } = new URL(request.url);
        if (!pathname.startsWith(`${CALLBACK_PREFIX}/`)) return new Response("Not found", { status: 404 });
        return app.fetch(request, env);
      },
    };
    this.outboundByHost = handlers;
  }
}
