import { DurableObject } from "cloudflare:workers";
import type { Job } from "../db/jobs.ts";
import { silenceTimeoutSeconds } from "../settings.ts";
import { countsD1Queries, withD1Totals } from "../db/query-count.ts";
import * as slots from "./active-slots.ts";
import { KeyRevocations } from "./key-revocations.ts";
import { JobWaiters } from "./job-waiters.ts";
import * as live from "./live-jobs.ts";
import * as uploads from "./open-uploads.ts";
import { PlanLimits } from "./plan-limits.ts";
import { RequestWindow, type HitResult } from "./request-window.ts";
import * as watchdog from "./watchdog.ts";

export type AdmitResult = { revoked: true } | ({ revoked: false } & HitResult & { granted: number; job?: live.LiveJobView });

/** A job read rides on the request's admission: the job's view comes back in the same call. */
export interface JobReadRequest {
  jobId: string;
  cdnBase: string;
}

/** What a held job read gets back (waitForEnd): the job's view once the wait is over. */
export interface HeldRead {
  /** False when the read was not held (too many held already): the view is as of now. */
  held: boolean;
  view: live.LiveJobView;
}

/** How long the watchdog waits before retrying an expiry that threw. */
export const EXPIRY_RETRY_MS = 30_000;

/**
 * One per account (named by the account id). Holds the decisions that must be
 * exact under concurrency: the request window and the active-job slots, plus
 * the watchdog deadlines of the account's processing jobs. RPC methods that
 * decide something are synchronous (memory and synchronous SQL only), so the
 * runtime never interleaves two of them.
 *
 * What an overdue job's expiry does to the job itself is the jobs domain's
 * (src/jobs/account-state.ts completes this class with it), so the account
 * never imports the lifecycle that calls it.
 */
export abstract class AccountObject extends DurableObject<Env> {
  /** Fails, requeues or repairs an overdue job; "ended" when the job no longer holds anything here. */
  protected abstract expireOverdueJob(accountId: string, jobId: string): Promise<"ended" | "repaired">;

  /** Public for tests (runInDurableObject); not an RPC method. */
  readonly requestWindow: RequestWindow;
  private readonly revocations: KeyRevocations;
  private readonly limits: PlanLimits;
  /** Held job reads (job-waiters.ts); memory only. */
  private readonly waiters = new JobWaiters();
  /** Set once the account id is stored, so the hot path does not write it again. */
  private accountIdStored = false;

  constructor(ctx: DurableObjectState, env: Env) {
    // The watchdog's expiries write D1: the local benches count them too (d1-query-header.ts).
    super(ctx, countsD1Queries(env) ? withD1Totals(env) : env);
    const sql = ctx.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    slots.createActiveSlotsTable(sql);
    watchdog.createWatchdogTable(sql);
    live.createLiveJobsTable(sql);
    uploads.createOpenUploadsTable(sql);
    this.requestWindow = new RequestWindow(sql);
    this.revocations = new KeyRevocations(sql);
    this.limits = new PlanLimits(sql);
  }

  /** Records the account id the first time a caller names it; the alarm needs it. */
  init(accountId: string): void {
    if (this.accountIdStored) return;
    this.ctx.storage.sql.exec(`INSERT OR IGNORE INTO meta (key, value) VALUES ('account_id', ?)`, accountId);
    this.accountIdStored = true;
  }

  accountId(): string | null {
    const rows = this.ctx.storage.sql
      .exec<{ value: string }>(`SELECT value FROM meta WHERE key = 'account_id'`)
      .toArray();
    return rows[0]?.value ?? this.ctx.id.name ?? null;
  }

  /** Counts one authenticated request against the rolling 60 s window. */
  hit(limitPerMinute: number, accountId?: string): HitResult {
    if (accountId) this.init(accountId);
    return this.countRequest(limitPerMinute);
  }

  /**
   * The per-request gate: refuses a key revoked since the caller looked it up,
   * otherwise counts the request against the window. The limit set by the
   * last plan change wins over the caller's (possibly cached) plan limit.
   * With `read`, an admitted request also gets the job's view (live-jobs.ts),
   * so a job read costs this one call and no D1 query. `cost` is how many
   * requests it counts as (an MCP batch: one per message, default 1): as many
   * as the window has room for are counted, and `granted` says how many.
   */
  admit(request: { accountId: string; keyId: string; requestsPerMinute: number; read?: JobReadRequest; cost?: number }): AdmitResult {
    this.init(request.accountId);
    if (this.revocations.isRevoked(request.keyId)) return { revoked: true };
    const limit = this.limits.requestsPerMinute(request.requestsPerMinute);
    const { granted, result } = this.requestWindow.take(limit, Date.now(), Math.max(1, Math.floor(request.cost ?? 1)));
    if (!result.allowed || !request.read) return { revoked: false, ...result, granted };
    const job = live.viewJob(this.ctx.storage.sql, request.read.jobId, request.read.cdnBase);
    return { revoked: false, ...result, granted, job };
  }

  revokeKey(keyId: string): void {
    this.revocations.revoke(keyId, Date.now());
  }

  /** Called on every plan change: the stored limits win over callers' cached plans. */
  setPlanLimits(limits: { requestsPerMinute: number; maxActiveJobs: number }): void {
    this.limits.set(limits);
  }

  /** The window writes ahead itself (request-window.ts): exact across restarts. */
  private countRequest(limit: number): HitResult {
    return this.requestWindow.hit(limit, Date.now());
  }

  /** A new upload takes its place under the plan's open-upload caps, or is refused (open-uploads.ts). */
  reserveUpload(uploadId: string, bytes: number, lapsesAtMs: number, limits: uploads.OpenUploadLimits): uploads.ReserveResult {
    return uploads.reserveUpload(this.ctx.storage.sql, uploadId, bytes, lapsesAtMs, limits, Date.now());
  }

  extendUpload(uploadId: string, lapsesAtMs: number): void {
    uploads.extendUpload(this.ctx.storage.sql, uploadId, lapsesAtMs);
  }

  /** The upload was deleted (or never created): its place is free. */
  releaseUpload(uploadId: string): void {
    uploads.releaseUpload(this.ctx.storage.sql, uploadId);
  }

  openUploads(): { count: number; bytes: number } {
    return uploads.openUploads(this.ctx.storage.sql, Date.now());
  }

  /** `maxActive` is the caller's (possibly cached) plan; a limit stored by a plan change wins. */
  acquireSlot(jobId: string, maxActive: number): slots.AcquireResult {
    return slots.acquireSlot(this.ctx.storage.sql, jobId, this.limits.maxActiveJobs(maxActive), Date.now());
  }

  releaseSlot(jobId: string): void {
    slots.releaseSlot(this.ctx.storage.sql, jobId);
  }

  activeJobs(): string[] {
    return slots.activeJobs(this.ctx.storage.sql);
  }

  /** The slots with the time each was taken (submission checks stale ones against D1). */
  heldSlots(): slots.HeldSlot[] {
    return slots.heldSlots(this.ctx.storage.sql);
  }

  /**
   * (Re)arms the job's deadline: MAX_QUEUE_SECONDS while it is queued (set at
   * submission), the engine's silence timeout once processing (re-armed by
   * every engine report).
   */
  async touchWatchdog(jobId: string, silenceTimeoutSeconds: number): Promise<void> {
    watchdog.setDeadline(this.ctx.storage.sql, jobId, Date.now() + silenceTimeoutSeconds * 1000);
    await this.scheduleAlarm();
  }

  async clearWatchdog(jobId: string): Promise<void> {
    watchdog.clearDeadline(this.ctx.storage.sql, jobId);
    await this.scheduleAlarm();
  }

  /** A job was accepted (its D1 row is written): its live state starts here, with its queue deadline. */
  async jobAccepted(job: Job, queueSeconds: number): Promise<void> {
    live.trackJob(this.ctx.storage.sql, job);
    await this.touchWatchdog(job.id, queueSeconds);
  }

  /** Repairs the live state from D1 (a transition this object missed); never revives an ended job. */
  seedJob(job: Job): void {
    live.trackJob(this.ctx.storage.sql, job);
  }

  /**
   * queued -> processing (deadline: the silence timeout) or back to queued
   * (deadline: the queue timeout), after D1 made the same move.
   */
  async jobMoved(jobId: string, transition: live.Transition, deadlineSeconds: number): Promise<void> {
    live.moveJob(this.ctx.storage.sql, jobId, transition);
    await this.touchWatchdog(jobId, deadlineSeconds);
  }

  /** The engine's probe (after D1 recorded it): also a report. False when the job is not processing here. */
  async jobProbed(jobId: string, title: string, durationSeconds: number, silenceSeconds: number): Promise<boolean> {
    if (!live.probeJob(this.ctx.storage.sql, jobId, title, durationSeconds, Date.now())) return false;
    await this.touchWatchdog(jobId, silenceSeconds);
    return true;
  }

  /**
   * An engine report (progress, heartbeat, upload): progress, step and the
   * deadline in one call and no D1 write. Returns the live job, or null when
   * it is not processing here (ended, or unknown to this object).
   */
  async engineReport(jobId: string, report: live.Report, silenceSeconds: number): Promise<Job | null> {
    const sql = this.ctx.storage.sql;
    if (!live.recordReport(sql, jobId, report, Date.now())) return null;
    await this.touchWatchdog(jobId, silenceSeconds);
    return live.processingJob(sql, jobId);
  }

  /** The live job when it is processing here, else null (the engine's routes that are not reports). */
  processingJob(jobId: string): Job | null {
    return live.processingJob(this.ctx.storage.sql, jobId);
  }

  /**
   * The job ended in D1: frees its slot and deadline, stops taking its
   * reports and answers the reads held on it. Every end reaches here after
   * its D1 batch committed (src/jobs/settle.ts), so a woken read finds the
   * final status in D1.
   */
  async jobEnded(jobId: string): Promise<void> {
    const sql = this.ctx.storage.sql;
    slots.releaseSlot(sql, jobId);
    watchdog.clearDeadline(sql, jobId);
    live.endJob(sql, jobId, Date.now());
    this.waiters.wake(jobId);
    await this.scheduleAlarm();
  }

  /**
   * Holds a job read (`Prefer: wait`) until the job ends or `timeoutMs`
   * passes (at most a minute), then returns the job's view as a read would
   * get it. Returns at once for a job this object knows has ended. Not a
   * request of its own: the read was counted when it was admitted.
   */
  async waitForEnd(jobId: string, cdnBase: string, timeoutMs: number): Promise<HeldRead> {
    const sql = this.ctx.storage.sql;
    if (!live.hasEnded(sql, jobId)) {
      const ended = this.waiters.wait(jobId, timeoutMs);
      if (ended === null) return { held: false, view: live.viewJob(sql, jobId, cdnBase) };
      await ended;
    }
    return { held: true, view: live.viewJob(sql, jobId, cdnBase) };
  }

  /** Reads held on the job now (tests and operators). */
  heldReads(jobId: string): number {
    return this.waiters.waiting(jobId);
  }

  /** Keeps a finished job's presented JSON for the next reads (see live-jobs.ts). */
  cacheFinishedJob(jobId: string, cdnBase: string, json: string): void {
    live.cacheFinished(this.ctx.storage.sql, jobId, cdnBase, json, Date.now());
  }

  /** A clip of the finished job was replaced (docs/editing.md): its cached view is dropped. */
  dropFinishedView(jobId: string): void {
    live.dropFinishedView(this.ctx.storage.sql, jobId);
  }

  /** Called before a job's D1 row is deleted; a read still held on it answers now. */
  forgetJob(jobId: string): void {
    live.forgetJob(this.ctx.storage.sql, jobId, Date.now());
    this.waiters.wake(jobId);
  }

  /** The live state of those of `jobIds` that are active (for lists, which read D1). */
  liveActiveJobs(jobIds: string[]): Job[] {
    return live.activeJobs(this.ctx.storage.sql, jobIds);
  }

  /** The job's view as a read would get it (tests and operators). */
  liveJob(jobId: string, cdnBase: string): live.LiveJobView {
    return live.viewJob(this.ctx.storage.sql, jobId, cdnBase);
  }

  /** The job's current deadline in epoch ms, or null (for operators and tests). */
  watchdogDeadline(jobId: string): number | null {
    return watchdog.deadlineOf(this.ctx.storage.sql, jobId);
  }

  /**
   * Fails every job past its deadline. An expiry that throws is retried later
   * (its deadline moves EXPIRY_RETRY_MS ahead) and the alarm is always re-armed
   * for what remains, so no deadline is ever lost. Each job's deadline is read
   * again right before it is failed: a report that arrived while an earlier
   * job was being expired has moved it, and then the job lives on.
   */
  override async alarm(): Promise<void> {
    const sql = this.ctx.storage.sql;
    const accountId = this.accountId();
    for (const jobId of watchdog.dueJobs(sql, Date.now())) {
      const deadline = watchdog.deadlineOf(sql, jobId);
      if (deadline === null || deadline > Date.now()) continue;
      // The last report is the truth for a processing job: one that moved it
      // without moving the deadline keeps the job alive.
      const reported = live.lastReportMs(sql, jobId);
      const silentUntil = reported === null ? null : reported + silenceTimeoutSeconds(this.env) * 1000;
      if (silentUntil !== null && silentUntil > Date.now()) {
        watchdog.setDeadline(sql, jobId, silentUntil);
        continue;
      }
      try {
        if (!accountId) throw new Error("account id unknown to this Durable Object");
        if ((await this.expireOverdueJob(accountId, jobId)) === "ended") {
          watchdog.clearDeadline(sql, jobId);
          slots.releaseSlot(sql, jobId);
          live.endJob(sql, jobId, Date.now());
          // The expiry's own release (settle.ts) woke them already, unless that call failed.
          this.waiters.wake(jobId);
        } else if ((watchdog.deadlineOf(sql, jobId) ?? 0) <= Date.now()) {
          // Repaired (fleet/repair.ts) and re-armed by that repair; if its call here failed, look again later.
          watchdog.setDeadline(sql, jobId, Date.now() + EXPIRY_RETRY_MS);
        }
      } catch (err) {
        console.error(`watchdog: expiring job ${jobId} failed, retrying later`, err);
        watchdog.setDeadline(sql, jobId, Date.now() + EXPIRY_RETRY_MS);
      }
    }
    await this.scheduleAlarm();
  }

  private async scheduleAlarm(): Promise<void> {
    const next = watchdog.earliestDeadline(this.ctx.storage.sql);
    if (next === null) {
      await this.ctx.storage.deleteAlarm();
      return;
    }
    const current = await this.ctx.storage.getAlarm();
    if (current !== next) await this.ctx.storage.setAlarm(next);
  }
}
