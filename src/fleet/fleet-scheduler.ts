/**
 * FleetScheduler: the one owner of engine capacity (one instance, named
 * "fleet"). At most `capacity` jobs hold an engine at once; every other job
 * waits here, durably, and gets an engine by the fair rule of fair-order.ts.
 *
 * The scheduler never talks to engines and never changes a job's status: it
 * only decides who may start. Its RPC answers name the jobs that were just
 * granted an engine ("grants"); the caller sends each a jobs-queue message and
 * the queue consumer starts it. The alarm is the safety net: it re-sends
 * grants whose start never happened and gives back capacity held by jobs
 * that already ended in D1.
 */
import { DurableObject } from "cloudflare:workers";
import { fairOrder } from "./fair-order";
import * as tables from "./fleet-tables";

export interface Grant {
  jobId: string;
  accountId: string;
}

export type Admission =
  | { state: "granted"; grants: Grant[] }
  | { state: "waiting"; position: number; grants: Grant[] };

export interface FleetSnapshot {
  capacity: number;
  holding: string[];
  waiting: number;
}

/** A granted job whose engine has not accepted it by then gets its dispatch message again. */
export const GRANT_START_TIMEOUT_MS = 10 * 60_000;
/** How often the alarm checks held capacity against D1 while anything is held or waiting. */
export const RECONCILE_INTERVAL_MS = 60_000;
/** A job ended in D1 this long ago and still holding here had its release lost. */
export const RECONCILE_GRACE_MS = 60_000;

const ENDED = new Set(["completed", "failed", "canceled"]);

export class FleetScheduler extends DurableObject<Env> {
  private capacity = 1;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    tables.createFleetTables(ctx.storage.sql);
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /**
   * A queued job asks for an engine. Idempotent: a job already holding one is
   * "granted" again (a re-delivered dispatch message), a waiting job keeps its
   * place. Grants made for other jobs on the way are returned too.
   */
  admit(job: Grant, capacity: number): Admission {
    this.capacity = capacity;
    const sql = this.sql;
    if (!tables.findHolding(sql, job.jobId) && !tables.isWaiting(sql, job.jobId)) {
      tables.addWaiting(sql, job.jobId, job.accountId, tables.nextCounter(sql, "seq"));
    }
    const grants = this.pump();
    this.armAlarm();
    if (tables.findHolding(sql, job.jobId)) {
      return { state: "granted", grants: grants.filter((g) => g.jobId !== job.jobId) };
    }
    return { state: "waiting", position: this.position(job.jobId) ?? 1, grants };
  }

  /** An engine accepted the job: its grant is used. */
  confirmStarted(jobId: string): boolean {
    return tables.markStarted(this.sql, jobId);
  }

  /**
   * The job ended (or left the queue): its engine, or its place in line, is
   * given back, and the freed capacity is granted at once.
   */
  release(jobId: string, capacity: number): Grant[] {
    this.capacity = capacity;
    tables.forget(this.sql, jobId);
    tables.pruneServed(this.sql);
    const grants = this.pump();
    this.armAlarm();
    return grants;
  }

  /**
   * A job whose engine was stopped under it goes back to the head of the
   * line (it already waited its turn); free capacity is granted at once.
   */
  requeue(jobId: string, accountId: string, capacity: number): Grant[] {
    this.capacity = capacity;
    const sql = this.sql;
    if (!tables.ungrant(sql, jobId) && !tables.isWaiting(sql, jobId)) tables.addWaitingAtHead(sql, jobId, accountId);
    const grants = this.pump();
    this.armAlarm();
    return grants;
  }

  /** 1-based place among waiting jobs, or null when the job is not waiting. */
  position(jobId: string): number | null {
    const sql = this.sql;
    const order = fairOrder(
      tables.waitingRows(sql).map((r) => ({ jobId: r.job_id, accountId: r.account_id, seq: r.seq })),
      { running: tables.runningPerAccount(sql), lastServed: tables.lastServed(sql) },
    );
    const index = order.findIndex((w) => w.jobId === jobId);
    return index < 0 ? null : index + 1;
  }

  snapshot(): FleetSnapshot {
    return {
      capacity: this.capacity,
      holding: tables.holdingRows(this.sql).map((r) => r.job_id),
      waiting: tables.waitingRows(this.sql).length,
    };
  }

  /** Grants free capacity to waiting jobs in fair order. */
  private pump(): Grant[] {
    const sql = this.sql;
    const now = Date.now();
    let free = this.capacity - tables.holdingCount(sql);
    if (free <= 0) return [];
    const ready = tables.waitingRows(sql);
    if (ready.length === 0) return [];
    const order = fairOrder(
      ready.map((r) => ({ jobId: r.job_id, accountId: r.account_id, seq: r.seq })),
      { running: tables.runningPerAccount(sql), lastServed: tables.lastServed(sql) },
    );
    const grants: Grant[] = [];
    for (const next of order) {
      if (free <= 0) break;
      tables.grant(sql, { job_id: next.jobId, account_id: next.accountId }, now, tables.nextCounter(sql, "turn"));
      grants.push({ jobId: next.jobId, accountId: next.accountId });
      free -= 1;
    }
    return grants;
  }

  private armAlarm(): void {
    const busy = tables.holdingCount(this.sql) > 0 || tables.waitingRows(this.sql).length > 0;
    if (!busy) return;
    const when = Date.now() + RECONCILE_INTERVAL_MS;
    void this.ctx.storage.getAlarm().then((current) => {
      if (current === null || current > when) return this.ctx.storage.setAlarm(when);
    });
  }

  override async alarm(): Promise<void> {
    // Capacity is granted where it is released; here only what reconciling freed.
    const freed = await this.reconcile();
    const grants = freed > 0 ? this.pump() : [];
    const now = Date.now();
    const stale = tables
      .holdingRows(this.sql)
      .filter((r) => r.started === 0 && now - r.granted_ms > GRANT_START_TIMEOUT_MS)
      .map((r) => ({ jobId: r.job_id, accountId: r.account_id }));
    await sendDispatches(this.env, [...grants, ...stale]);
    this.armAlarm();
  }

  /** Gives back what jobs that already ended (or vanished) in D1 still hold here; how many engines that freed. */
  private async reconcile(): Promise<number> {
    let freed = 0;
    const ids = [...tables.holdingRows(this.sql), ...tables.waitingRows(this.sql)].map((r) => r.job_id);
    for (let i = 0; i < ids.length; i += 50) {
      const chunk = ids.slice(i, i + 50);
      const placeholders = chunk.map(() => "?").join(", ");
      const { results } = await this.env.DB.prepare(`SELECT id, status, updated_at FROM jobs WHERE id IN (${placeholders})`)
        .bind(...chunk)
        .all<{ id: string; status: string; updated_at: string }>();
      const rows = new Map(results.map((r) => [r.id, r]));
      const settledBefore = Date.now() - RECONCILE_GRACE_MS;
      for (const jobId of chunk) {
        const row = rows.get(jobId);
        // The lifecycle releases right after a job's end is written: only an end older than the grace was missed.
        const missed = row === undefined || (ENDED.has(row.status) && Date.parse(row.updated_at) < settledBefore);
        if (missed && tables.forget(this.sql, jobId)) freed += 1;
      }
    }
    tables.pruneServed(this.sql);
    return freed;
  }
}

/** One jobs-queue message per grant: the consumer starts the job on its engine. */
export async function sendDispatches(env: Env, grants: readonly Grant[]): Promise<void> {
  // sendBatch takes at most 100 messages.
  for (let i = 0; i < grants.length; i += 100) {
    await env.JOBS.sendBatch(grants.slice(i, i + 100).map((g) => ({ body: { job_id: g.jobId, account_id: g.accountId } })));
  }
}
