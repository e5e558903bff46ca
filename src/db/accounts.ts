/**
 * Accounts, their credit balance and its calendar-month period (UTC).
 *
 * Balance: remaining = plan credits + granted - used - reserved, never below 0.
 * Period roll (lazy, on the first read in a new month): `credits_used` and
 * `credits_granted` go back to 0, because grants are top-ups for the current
 * period, like the plan's own credits. `credits_reserved` carries over: it
 * belongs to jobs still running across the month boundary.
 */
import { newId } from "../lib/random.ts";
import { PLAN_COLUMNS, planFromRow, type PlanLimits, type PlanRow } from "./plans.ts";

export interface Account {
  id: string;
  email: string;
  plan: string;
  creditsGranted: number;
  creditsUsed: number;
  creditsReserved: number;
  periodStart: string;
  createdAt: string;
}

interface AccountRow {
  id: string;
  email: string;
  plan: string;
  credits_granted: number;
  credits_used: number;
  credits_reserved: number;
  period_start: string;
  created_at: string;
}

const ACCOUNT_COLUMNS = "id, email, plan, credits_granted, credits_used, credits_reserved, period_start, created_at";

function accountFromRow(row: AccountRow): Account {
  return {
    id: row.id,
    email: row.email,
    plan: row.plan,
    creditsGranted: row.credits_granted,
    creditsUsed: row.credits_used,
    creditsReserved: row.credits_reserved,
    periodStart: row.period_start,
    createdAt: row.created_at,
  };
}

export function periodStartOf(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

export function periodEndOf(periodStart: string): string {
  const start = new Date(periodStart);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)).toISOString();
}

export async function createAccount(
  db: D1Database,
  input: { email: string; plan: string; /** Dashboard sign-ups only (see dashboard/security/password). */ passwordHash?: string },
  now = new Date(),
): Promise<Account> {
  const account: Account = {
    id: newId("acct"),
    email: input.email,
    plan: input.plan,
    creditsGranted: 0,
    creditsUsed: 0,
    creditsReserved: 0,
    periodStart: periodStartOf(now),
    createdAt: now.toISOString(),
  };
  await db
    .prepare(`INSERT INTO accounts (id, email, plan, password_hash, period_start, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
    .bind(account.id, account.email, account.plan, input.passwordHash ?? null, account.periodStart, account.createdAt)
    .run();
  return account;
}

export async function findAccountByEmail(db: D1Database, email: string): Promise<Account | null> {
  const row = await db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = ?`).bind(email).first<AccountRow>();
  return row ? accountFromRow(row) : null;
}

/** The statement that rolls the period if the month changed since period_start (idempotent under races). */
function rollPeriodStatement(db: D1Database, accountId: string, now: Date): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE accounts SET period_start = ?1, credits_used = 0, credits_granted = 0
       WHERE id = ?2 AND period_start < ?1`,
    )
    .bind(periodStartOf(now), accountId);
}

/** Rolls the period if the month changed since period_start (idempotent under races). */
export async function rollPeriodIfDue(db: D1Database, accountId: string, now = new Date()): Promise<void> {
  await rollPeriodStatement(db, accountId, now).run();
}

/** The roll and the read in one batch: one D1 round trip (and one transaction) instead of two. */
async function firstAfterRoll<T>(db: D1Database, accountId: string, now: Date, read: D1PreparedStatement): Promise<T | null> {
  const [, result] = await db.batch<T>([rollPeriodStatement(db, accountId, now), read]);
  return result?.results[0] ?? null;
}

export async function getAccount(db: D1Database, accountId: string, now = new Date()): Promise<Account | null> {
  const row = await firstAfterRoll<AccountRow>(db, accountId, now, db.prepare(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`).bind(accountId));
  return row ? accountFromRow(row) : null;
}

export interface Usage {
  plan: PlanLimits;
  creditsGranted: number;
  creditsUsed: number;
  creditsReserved: number;
  creditsRemaining: number;
  periodStart: string;
  periodEnd: string;
}

export function remainingCredits(plan: PlanLimits, account: Pick<Account, "creditsGranted" | "creditsUsed" | "creditsReserved">): number {
  return Math.max(0, plan.creditsPerPeriod + account.creditsGranted - account.creditsUsed - account.creditsReserved);
}

/** The account's balance for the current period (rolling the period first if due). */
export async function getUsage(db: D1Database, accountId: string, now = new Date()): Promise<Usage | null> {
  const row = await firstAfterRoll<PlanRow & Pick<AccountRow, "credits_granted" | "credits_used" | "credits_reserved" | "period_start">>(
    db,
    accountId,
    now,
    db
      .prepare(
        `SELECT a.credits_granted, a.credits_used, a.credits_reserved, a.period_start,
                ${PLAN_COLUMNS.split(", ").map((c) => `p.${c}`).join(", ")}
         FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = ?`,
      )
      .bind(accountId),
  );
  if (!row) return null;
  const plan = planFromRow(row);
  const balance = { creditsGranted: row.credits_granted, creditsUsed: row.credits_used, creditsReserved: row.credits_reserved };
  return {
    plan,
    ...balance,
    creditsRemaining: remainingCredits(plan, balance),
    periodStart: row.period_start,
    periodEnd: periodEndOf(row.period_start),
  };
}

export async function setAccountPlan(db: D1Database, accountId: string, plan: string): Promise<boolean> {
  const result = await db.prepare(`UPDATE accounts SET plan = ? WHERE id = ?`).bind(plan, accountId).run();
  return result.meta.changes > 0;
}

export async function grantCredits(db: D1Database, accountId: string, credits: number, now = new Date()): Promise<boolean> {
  await rollPeriodIfDue(db, accountId, now);
  const result = await db
    .prepare(`UPDATE accounts SET credits_granted = credits_granted + ? WHERE id = ?`)
    .bind(credits, accountId)
    .run();
  return result.meta.changes > 0;
}

export function usageToJson(usage: Usage) {
  return {
    credits_remaining: usage.creditsRemaining,
    credits_total: usage.plan.creditsPerPeriod,
    plan: usage.plan.name,
    credits_granted: usage.creditsGranted,
    credits_used: usage.creditsUsed,
    credits_reserved: usage.creditsReserved,
    period_start: usage.periodStart,
    period_end: usage.periodEnd,
  };
}
