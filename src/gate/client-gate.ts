/**
 * One Durable Object per client address (its /64 for IPv6): the rolling
 * window of that address's requests that reach authentication without a key
 * this isolate already knows to be valid. It is the same window the accounts
 * use (request-window.ts): exact under concurrency and across restarts.
 */
import { DurableObject } from "cloudflare:workers";
import { RequestWindow, type HitResult } from "../account/request-window";

export class ClientGate extends DurableObject<Env> {
  private readonly window: RequestWindow;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.window = new RequestWindow(ctx.storage.sql);
  }

  hit(limitPerMinute: number): HitResult {
    return this.window.hit(limitPerMinute, Date.now());
  }
}

export function clientGate(env: Env, key: string) {
  return env.CLIENTS.get(env.CLIENTS.idFromName(key));
}
