/**
 * FleetScheduler: the one owner of engine capacity (one instance, named
 * "fleet"). At most `capacity` jobs hold an engine at once, and an instance
 * still stopping keeps its slot until the platform reports its exit (or its
 * grace is over); every other job waits here, durably, in the line of
 * fair-rule.ts.
 *
 * The scheduler never talks to engines and never changes a job's status: it
 * decides who may start, and keeps one dispatch chain per granted job. Its
 * answers name the jobs just granted an engine ("grants", each with its chain
 * number); the caller sends each a jobs-queue message and the queue consumer
 * starts it. A message whose chain number is not the job's current one is
 * stale and dropped, so a lost message can be re-sent without ever running
 * two chains for one job.
 *
 * Cost per call does not grow with the line: the next grant is the first row
 * of an index, a job's place comes from ranked-line.ts, and everything else
 * is bounded by the capacity or by one account's jobs.
 */
import { DurableObject } from "cloudflare:workers";
import type { JobMessage } from "./job-message.ts";
import { roundFor } from "./fair-rule.ts";
import * as tables from "./fleet-tables.ts";
import { engineHosts, stopEngine, type StartFailureKind, type StartProblem } from "./engine-host.ts";
import { fleetLimits, type FleetLimits } from "./limits.ts";
import { RankedLine } from "./ranked-line.ts";
import { fleetScheduler } from "./stub.ts";
import { fleetTime } from "./time.ts";

export interface Grant {
  jobId: string;
  accountId: string;
  /** The chain number its message carries. */
  dispatch: number;
}

export type Claim =
  | { state: "granted"; dispatch: number; grants: Grant[] }
  | { state: "waiting"; position: number; grants: Grant[] }
  /** The engine already has it (a duplicate delivery). */
  | { state: "started"; grants: Grant[] }
  /** Another chain owns the job now (or the fleet let it go): drop the message. */
  | { state: "stale"; grants: Grant[] };

export type { StartFailureKind, StartProblem } from "./engine-host.ts";

export type StartFailure =
  | { action: "retry"; dispatch: number; delaySeconds: number }
  /** The start budget is spent: the caller fails the job. */
  | { action: "give_up"; triedSeconds: number }
  /** The job no longer holds this grant (ended, requeued, or started by another delivery). */
  | { action: "stale"; started: boolean };

export type JobFleetState =
  | { state: "unknown" }
  | { state: "waiting" }
  | { state: "granted"; dispatch: number }
  | { state: "started"; dispatch: number };

export interface FleetSnapshot {
  capacity: number;
  holding: string[];
  waiting: number;
  stopping: number;
}

export interface FleetStats {
  capacity: number;
  /** Jobs whose engine accepted them. */
  running: number;
  /** Jobs granted an engine that has not accepted them yet (starting, or retrying a refused start). */
  starting: number;
  waiting: number;
  /** Instances of ended or interrupted jobs that have not exited yet (they keep their slot). */
  stopping: number;
  free: number;
  oldest_wait_seconds: number | null;
  /** Grants in the last complete minute. */
  grants_last_minute: number;
  grants_per_minute_last_hour: number;
  starts_last_hour: number;
  start_failures_last_hour: Record<string, number>;
}

/** A chain whose message has not been handled this long after it was due was lost: it is re-sent. */
export const DISPATCH_OVERDUE_MS = 10 * 60_000;
/** How often the alarm reconciles while anything is held, waiting or stopping. */
export const RECONCILE_INTERVAL_MS = 60_000;
/** D1 must disagree with a grant this long (two reconciles) before the fleet acts on it. */
export const RECONCILE_GRACE_MS = 60_000;
/** Retry delays of a start that failed for reasons not the job's own: 15 s, 30 s, then every 60 s. */
export function startRetryDelaySeconds(failures: number): number {
  return Math.min(60, 15 * 2 ** Math.max(0, failures - 1));
}
/**
 * A stopping instance whose exit notice (ClipEngine.onStop) has not come this
 * long after its stop is asked about (our engine exits in seconds; a notice
 * can be lost in a deploy): gone, its slot is free at once instead of after
 * ENGINE_STOP_GRACE_SECONDS. At most EXIT_PROBES_PER_TICK a tick.
 */
export const EXIT_PROBE_AFTER_MS = 60_000;
const EXIT_PROBES_PER_TICK = 50;
/** An operator has to fix the deployment: look again every five minutes, without a budget. */
const MISCONFIGURED_RETRY_SECONDS = 300;

const ENDED = new Set(["completed", "failed", "canceled"]);

export class FleetScheduler extends DurableObject<Env> {
  /** The waiting line's ranks, rebuilt from the table after every start of this object. */
  private line: RankedLine | null = null;
  /** The limits last stored (fleet_meta), kept in memory. */
  private limits: FleetLimits | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    tables.createFleetTables(ctx.storage.sql);
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /**
   * A delivery of the job's message asks for its engine. `dispatch` is the
   * chain number the message carries (0: the submission's message). Granted:
   * the caller starts the job. Idempotent for a redelivery of the live chain.
   */
  claim(request: { jobId: string; accountId: string; dispatch: number }, limits: FleetLimits): Claim {
    return this.atomically(() => {
      const now = fleetTime.now();
      this.remember(limits);
      const held = tables.findHolding(this.sql, request.jobId);
      if (held) {
        if (held.started === 1) return { state: "started", grants: [] };
        if (held.dispatch !== request.dispatch) return { state: "stale", grants: [] };
        return { state: "granted", dispatch: held.dispatch, grants: [] };
      }
      if (tables.findWaiting(this.sql, request.jobId)) {
        return { state: "waiting", position: this.rank(request.jobId) ?? 1, grants: [] };
      }
      if (request.dispatch !== 0) return { state: "stale", grants: [] };
      this.join(request.jobId, request.accountId, now);
      const grants = this.pump(now, request.jobId);
      const mine = tables.findHolding(this.sql, request.jobId);
      if (mine) return { state: "granted", dispatch: mine.dispatch, grants };
      return { state: "waiting", position: this.rank(request.jobId) ?? 1, grants };
    });
  }

  /**
   * The engine accepted the job. False when the job no longer holds an
   * engine (it ended or was requeued meanwhile): the instance the caller just
   * started is counted as stopping, and the caller stops it.
   */
  confirmStarted(jobId: string): boolean {
    return this.atomically(() => {
      const now = fleetTime.now();
      const held = tables.findHolding(this.sql, jobId);
      if (!held) {
        this.countStopping(jobId, now);
        return false;
      }
      tables.updateHolding(this.sql, jobId, { started: 1, attempted: 1, failing_since_ms: null, failures: 0, suspect_ms: null });
      tables.countMinute(this.sql, now, "start");
      return true;
    });
  }

  /**
   * A StartJob of chain `dispatch` failed. For a reason not the job's own the
   * chain moves on (its next message is the caller's to send), until the
   * start budget, counted from the first failure, is spent; refused by the
   * engine itself, it gives up at once. Either way an instance may exist now.
   */
  startFailed(jobId: string, dispatch: number, kind: StartProblem, limits: FleetLimits): StartFailure {
    return this.atomically(() => {
      const now = fleetTime.now();
      const settings = this.remember(limits);
      tables.countMinute(this.sql, now, `failed:${kind}`);
      const held = tables.findHolding(this.sql, jobId);
      if (!held) {
        // Released while the start was under way: an instance may be booting for it.
        this.countStopping(jobId, now);
        return { action: "stale", started: false };
      }
      if (held.started === 1 || held.dispatch !== dispatch) return { action: "stale", started: held.started === 1 };
      const since = held.failing_since_ms ?? now;
      const failures = held.failures + 1;
      if (kind === "refused" || (kind !== "misconfigured" && now - since >= settings.startBudgetMs)) {
        tables.updateHolding(this.sql, jobId, { attempted: 1, failures });
        return { action: "give_up", triedSeconds: Math.round((now - since) / 1000) };
      }
      const delaySeconds = kind === "misconfigured" ? MISCONFIGURED_RETRY_SECONDS : startRetryDelaySeconds(failures);
      const next = held.dispatch + 1;
      tables.updateHolding(this.sql, jobId, {
        attempted: 1,
        failures,
        failing_since_ms: kind === "misconfigured" ? held.failing_since_ms : since,
        dispatch: next,
        due_ms: now + delaySeconds * 1000 + DISPATCH_OVERDUE_MS,
      });
      this.armAlarm(now);
      return { action: "retry", dispatch: next, delaySeconds };
    });
  }

  /**
   * The job ended (or was canceled while waiting): its place in line or its
   * engine is given back. An instance that may still run (a StartJob was
   * sent) keeps its slot as "stopping" until it exits.
   */
  release(jobId: string, limits: FleetLimits, options: { noInstance?: boolean } = {}): Grant[] {
    return this.atomically(() => {
      const now = fleetTime.now();
      this.remember(limits);
      this.leaveLine(jobId);
      const held = tables.removeHolding(this.sql, jobId);
      if (held && (held.attempted === 1 || held.started === 1) && held.exited === 0 && !options.noInstance) this.countStopping(jobId, now);
      const grants = this.pump(now);
      this.armAlarm(now);
      return grants;
    });
  }

  /**
   * The job's engine was stopped under it (a rollout): it goes back to the
   * head of the line (it already waited its turn) and its instance, until it
   * exits, keeps its slot.
   */
  requeue(jobId: string, accountId: string, limits: FleetLimits): Grant[] {
    return this.atomically(() => {
      const now = fleetTime.now();
      this.remember(limits);
      this.putBackAtHead(jobId, accountId, now);
      const grants = this.pump(now);
      this.armAlarm(now);
      return grants;
    });
  }

  /**
   * A job D1 says is queued, seen by a repair (fleet/repair.ts): if the fleet
   * still counts it as running (its requeue was lost) or does not know it, it
   * goes to the head of the line; a job waiting, or granted and starting,
   * keeps its state (its chain is alive, or re-sent when overdue).
   */
  ensureInLine(jobId: string, accountId: string, limits: FleetLimits): Grant[] {
    return this.atomically(() => {
      const now = fleetTime.now();
      this.remember(limits);
      const held = tables.findHolding(this.sql, jobId);
      if ((held && held.started === 1) || (!held && !tables.findWaiting(this.sql, jobId))) this.putBackAtHead(jobId, accountId, now);
      const grants = this.pump(now);
      this.armAlarm(now);
      return grants;
    });
  }

  /**
   * The platform reported the job's instance exited (ClipEngine.onStop). Its
   * slot is free. `heldBy`: the job still held that engine as running, so it
   * ended without its engine saying so (the caller puts it back in line).
   */
  instanceStopped(jobId: string): { grants: Grant[]; heldBy: string | null } {
    return this.atomically(() => {
      const now = fleetTime.now();
      tables.removeStopping(this.sql, jobId);
      const held = tables.findHolding(this.sql, jobId);
      let heldBy: string | null = null;
      if (held && held.started === 1 && held.exited === 0) {
        tables.updateHolding(this.sql, jobId, { exited: 1 });
        heldBy = held.account_id;
      }
      return { grants: this.pump(now), heldBy };
    });
  }

  /** 1-based place among waiting jobs, or null when the job is not waiting. */
  position(jobId: string): number | null {
    return this.rank(jobId);
  }

  /** What the fleet knows of one job (the dead-letter consumer asks before failing it). */
  jobState(jobId: string): JobFleetState {
    const held = tables.findHolding(this.sql, jobId);
    if (held) return held.started === 1 ? { state: "started", dispatch: held.dispatch } : { state: "granted", dispatch: held.dispatch };
    return tables.findWaiting(this.sql, jobId) ? { state: "waiting" } : { state: "unknown" };
  }

  snapshot(): FleetSnapshot {
    return {
      capacity: this.remember().capacity,
      holding: tables.holdingRows(this.sql).map((r) => r.job_id),
      waiting: tables.waitingCount(this.sql),
      stopping: tables.stoppingCount(this.sql),
    };
  }

  /** For operators (GET /admin/v1/fleet). */
  stats(limits?: FleetLimits): FleetStats {
    const now = fleetTime.now();
    const capacity = (limits ?? this.remember()).capacity;
    const holding = tables.holdingCount(this.sql);
    const running = tables.startedCount(this.sql);
    const stopping = tables.stoppingCount(this.sql);
    const oldest = tables.oldestWaitingSince(this.sql);
    const thisMinute = Math.floor(now / 60_000);
    let grantsLastMinute = 0;
    let grantsLastHour = 0;
    let startsLastHour = 0;
    const failures: Record<string, number> = {};
    for (const row of tables.minuteCounts(this.sql, now - 3600_000)) {
      if (row.kind === "grant") {
        grantsLastHour += row.n;
        if (row.minute === thisMinute - 1) grantsLastMinute = row.n;
      } else if (row.kind === "start") startsLastHour += row.n;
      else if (row.kind.startsWith("failed:")) failures[row.kind.slice(7)] = (failures[row.kind.slice(7)] ?? 0) + row.n;
    }
    return {
      capacity,
      running,
      starting: holding - running,
      waiting: tables.waitingCount(this.sql),
      stopping,
      free: Math.max(0, capacity - holding - stopping),
      oldest_wait_seconds: oldest === null ? null : Math.max(0, Math.round((now - oldest) / 1000)),
      grants_last_minute: grantsLastMinute,
      grants_per_minute_last_hour: Math.round((grantsLastHour / 60) * 10) / 10,
      starts_last_hour: startsLastHour,
      start_failures_last_hour: failures,
    };
  }

  /**
   * The safety net, run by the alarm (and by the simulation on its clock):
   * frees slots of instances whose grace is over, reconciles grants with D1,
   * re-sends chains whose message was lost, and grants what that freed.
   * Returns the grants (to send) and the jobs whose end the fleet learned
   * from D1 (their engines may still run: to stop); the alarm does both.
   */
  async tick(limits?: FleetLimits): Promise<TickResult> {
    const now = fleetTime.now();
    this.remember(limits);
    const stop = await this.reconcile(now);
    const grants = this.atomically(() => {
      const grants: Grant[] = [];
      for (const row of tables.holdingRows(this.sql)) {
        if (row.started === 1 || row.due_ms > now) continue;
        const next = row.dispatch + 1;
        tables.updateHolding(this.sql, row.job_id, { dispatch: next, due_ms: now + DISPATCH_OVERDUE_MS });
        grants.push({ jobId: row.job_id, accountId: row.account_id, dispatch: next });
      }
      grants.push(...this.pump(now));
      tables.pruneMinutes(this.sql, now - 2 * 3600_000);
      tables.pruneJoinedRounds(this.sql, this.currentRound());
      this.armAlarm(now);
      return grants;
    });
    const probe = tables.overdueStopping(this.sql, now - EXIT_PROBE_AFTER_MS, EXIT_PROBES_PER_TICK);
    return { grants, stop, probe };
  }

  /**
   * The platform says the instance of a stopping job is gone (an exit probe):
   * its slot is free. Only for a job that holds no engine again (see
   * overdueStopping); the notice itself (instanceStopped) does the rest.
   */
  instanceGone(jobId: string): Grant[] {
    return this.atomically(() => {
      if (tables.findHolding(this.sql, jobId) || !tables.removeStopping(this.sql, jobId)) return [];
      return this.pump(fleetTime.now());
    });
  }

  override async alarm(): Promise<void> {
    // The object itself frees what the probe finds gone (no call through its own stub).
    await followUpTick(this.env, await this.tick(), (jobId) => this.instanceGone(jobId));
  }

  // ---- internals ----

  /** Runs `work` as one transaction; the in-memory ranks are dropped if it throws. */
  private atomically<T>(work: () => T): T {
    try {
      return this.ctx.storage.transactionSync(work);
    } catch (err) {
      this.line = null;
      this.limits = null;
      throw err;
    }
  }

  /** Stores the caller's limits (the alarm has no caller); without any, the last stored or this deployment's. */
  private remember(limits?: FleetLimits): FleetLimits {
    const sql = this.sql;
    const known = this.limits;
    if (limits) {
      if (!known || known.capacity !== limits.capacity || known.stopGraceMs !== limits.stopGraceMs || known.startBudgetMs !== limits.startBudgetMs) {
        tables.setMeta(sql, "capacity", limits.capacity);
        tables.setMeta(sql, "stop_grace_ms", limits.stopGraceMs);
        tables.setMeta(sql, "start_budget_ms", limits.startBudgetMs);
        this.limits = { ...limits };
      }
      return limits;
    }
    if (known) return known;
    const fallback = fleetLimits(this.env);
    this.limits = {
      capacity: tables.metaValue(sql, "capacity") ?? fallback.capacity,
      stopGraceMs: tables.metaValue(sql, "stop_grace_ms") ?? fallback.stopGraceMs,
      startBudgetMs: tables.metaValue(sql, "start_budget_ms") ?? fallback.startBudgetMs,
    };
    return this.limits;
  }

  private ranks(): RankedLine {
    this.line ??= RankedLine.from(tables.lineEntries(this.sql));
    return this.line;
  }

  private rank(jobId: string): number | null {
    return this.ranks().rank(jobId);
  }

  private currentRound(): number {
    return tables.metaValue(this.sql, "round") ?? 0;
  }

  /** The job joins the line at its round (fair-rule.ts). */
  private join(jobId: string, accountId: string, now: number): void {
    const sql = this.sql;
    const waiting = tables.lastWaitingRound(sql, accountId);
    const joined = tables.lastJoinedRound(sql, accountId);
    const last = waiting === null ? joined : joined === null ? waiting : Math.max(waiting, joined);
    const round = roundFor(this.currentRound(), tables.heldBy(sql, accountId), last);
    tables.rememberJoinedRound(sql, accountId, round);
    const seq = tables.nextCounter(sql, "seq");
    tables.addWaiting(sql, { job_id: jobId, account_id: accountId, round, seq, since_ms: now });
    this.line?.insert({ jobId, round, seq });
  }

  private leaveLine(jobId: string): void {
    if (tables.removeWaiting(this.sql, jobId)) this.line?.remove(jobId);
  }

  private putBackAtHead(jobId: string, accountId: string, now: number): void {
    const sql = this.sql;
    const held = tables.removeHolding(sql, jobId);
    if (held && (held.attempted === 1 || held.started === 1) && held.exited === 0) this.countStopping(jobId, now);
    if (tables.findWaiting(sql, jobId)) return;
    // Round V with a negative sequence number: first in line, ahead of every arrival.
    const round = this.currentRound();
    const seq = -tables.nextCounter(sql, "head");
    tables.addWaiting(sql, { job_id: jobId, account_id: accountId, round, seq, since_ms: now });
    this.line?.insert({ jobId, round, seq });
  }

  private countStopping(jobId: string, now: number): void {
    const grace = this.remember().stopGraceMs;
    if (grace > 0) tables.addStopping(this.sql, jobId, now, now + grace);
  }

  /** Grants free capacity in line order; `claimant`'s own grant is not returned (its delivery starts it). */
  private pump(now: number, claimant?: string): Grant[] {
    const sql = this.sql;
    tables.expireStopping(sql, now);
    let free = this.remember().capacity - tables.holdingCount(sql) - tables.stoppingCount(sql);
    const grants: Grant[] = [];
    const before = this.currentRound();
    let round = before;
    while (free > 0) {
      const next = tables.firstWaiting(sql);
      if (!next) break;
      tables.removeWaiting(sql, next.job_id);
      this.line?.remove(next.job_id);
      const dispatch = next.job_id === claimant ? 0 : 1;
      tables.addHolding(sql, {
        job_id: next.job_id,
        account_id: next.account_id,
        round: next.round,
        granted_ms: now,
        dispatch,
        due_ms: now + DISPATCH_OVERDUE_MS,
      });
      round = Math.max(round, next.round);
      tables.countMinute(sql, now, "grant");
      if (next.job_id !== claimant) grants.push({ jobId: next.job_id, accountId: next.account_id, dispatch });
      free -= 1;
    }
    if (round !== before) tables.setMeta(sql, "round", round);
    return grants;
  }

  private armAlarm(now: number): void {
    const sql = this.sql;
    const busy = tables.holdingCount(sql) > 0 || tables.waitingCount(sql) > 0 || tables.stoppingCount(sql) > 0;
    if (!busy) return;
    const expiry = tables.nextStoppingExpiry(sql);
    const when = Math.min(now + RECONCILE_INTERVAL_MS, expiry ?? Infinity);
    void this.ctx.storage.getAlarm().then((current) => {
      if (current === null || current > when) return this.ctx.storage.setAlarm(when);
    });
  }

  /**
   * Grants D1 disagrees with, twice RECONCILE_GRACE_MS apart: a job that
   * ended (its release was lost) gives its engine back, and its instance,
   * which nobody may have stopped, is returned to be stopped; a job D1 moved
   * back to queued while it held a running engine (its requeue was lost)
   * goes back to the head of the line.
   */
  private async reconcile(now: number): Promise<string[]> {
    const rows = tables.holdingRows(this.sql);
    const statuses = new Map<string, string>();
    for (let i = 0; i < rows.length; i += 80) {
      const chunk = rows.slice(i, i + 80).map((r) => r.job_id);
      const { results } = await this.env.DB.prepare(`SELECT id, status FROM jobs WHERE id IN (${chunk.map(() => "?").join(", ")})`)
        .bind(...chunk)
        .all<{ id: string; status: string }>();
      for (const r of results) statuses.set(r.id, r.status);
    }
    const ended: string[] = [];
    this.atomically(() => {
      for (const row of rows) {
        const current = tables.findHolding(this.sql, row.job_id);
        if (!current) continue;
        const status = statuses.get(row.job_id);
        const isEnded = status === undefined || ENDED.has(status);
        const requeued = status === "queued" && current.started === 1;
        if (!isEnded && !requeued) {
          if (current.suspect_ms !== null) tables.updateHolding(this.sql, row.job_id, { suspect_ms: null });
          continue;
        }
        if (current.suspect_ms === null) {
          tables.updateHolding(this.sql, row.job_id, { suspect_ms: now });
          continue;
        }
        if (now - current.suspect_ms < RECONCILE_GRACE_MS) continue;
        if (isEnded) {
          tables.removeHolding(this.sql, row.job_id);
          if ((current.attempted === 1 || current.started === 1) && current.exited === 0) {
            this.countStopping(row.job_id, now);
            ended.push(row.job_id);
          }
        } else {
          this.putBackAtHead(row.job_id, row.account_id, now);
        }
      }
    });
    return ended;
  }
}

export interface TickResult {
  /** Grants to send. */
  grants: Grant[];
  /** Jobs whose end the fleet learned from D1: their engines may still run. */
  stop: string[];
  /** Stopping instances whose exit notice is overdue: to ask the platform about. */
  probe: string[];
}

/** What the alarm (and the simulation, on its clock) does with a tick: send, stop, and ask about overdue exits. */
export async function followUpTick(
  env: Env,
  { grants, stop, probe }: TickResult,
  instanceGone: (jobId: string) => Grant[] | Promise<Grant[]> = (jobId) => fleetScheduler(env).instanceGone(jobId),
): Promise<void> {
  await sendDispatches(env, grants);
  for (const jobId of stop) await stopEngine(env, jobId, false);
  const host = engineHosts.select(env);
  for (const jobId of probe) {
    if ((await host.exited(jobId)) !== true) continue;
    await sendDispatches(env, await instanceGone(jobId));
  }
}

/** One jobs-queue message per grant, carrying its chain number: the consumer starts the job. */
export async function sendDispatches(env: Env, grants: readonly Grant[]): Promise<void> {
  // sendBatch takes at most 100 messages.
  for (let i = 0; i < grants.length; i += 100) {
    await env.JOBS.sendBatch(
      grants.slice(i, i + 100).map((g) => ({ body: { job_id: g.jobId, account_id: g.accountId, dispatch: g.dispatch } satisfies JobMessage })),
    );
  }
}
