/**
 * One Durable Object per counted window (named by its user): a client
 * address (its /64 for IPv6) in front of API key authentication, and the
 * dashboard's per-address and per-session windows. It is the same window the
 * accounts use (request-window.ts): exact under concurrency and across
 * restarts.
 *
 * Nothing outlives its window: every stored reservation moves an alarm to
 * just after the reservation leaves the window, and the alarm deletes the
 * object's storage once nothing in it is still counted (an address or a
 * session that stopped calling leaves no rows behind).
 */
import { DurableObject } from "cloudflare:workers";
import { RequestWindow, RESERVE_SECONDS, WINDOW_SECONDS, type HitResult } from "../account/request-window.ts";

export class ClientGate extends DurableObject<Env> {
  private readonly window: RequestWindow;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.window = new RequestWindow(ctx.storage.sql);
  }

  async hit(limitPerMinute: number): Promise<HitResult> {
    const writesBefore = this.window.writes;
    const result = this.window.hit(limitPerMinute, Date.now());
    if (this.window.writes !== writesBefore) {
      // The reservation just stored is placed RESERVE_SECONDS ahead and counts for WINDOW_SECONDS after that.
      await this.ctx.storage.setAlarm(Date.now() + (RESERVE_SECONDS + WINDOW_SECONDS + 1) * 1000);
    }
    return result;
  }

  /** Rows still in the window (tests and the alarm). */
  liveRows(nowMs = Date.now()): number {
    const oldestLive = Math.floor(nowMs / 1000) - WINDOW_SECONDS;
    return this.ctx.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM request_window WHERE second > ?`, oldestLive).one().n;
  }

  override async alarm(): Promise<void> {
    if (this.liveRows() > 0) {
      await this.ctx.storage.setAlarm(Date.now() + WINDOW_SECONDS * 1000);
      return;
    }
    await this.ctx.storage.deleteAll();
    // deleteAll drops the table too; a later hit in this instance must find it again.
    this.window.recreate();
  }
}

export function clientGate(env: Env, key: string) {
  return env.CLIENTS.get(env.CLIENTS.idFromName(key));
}
