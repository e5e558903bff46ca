/**
 * Which account a job belongs to, remembered per isolate. The engine's token
 * names the job only, and its hot callbacks (progress, uploads) go to the
 * account's Durable Object: this keeps them from reading D1 for the account
 * on every report. A job never changes account, so an entry never goes stale.
 */
const MAX_ENTRIES = 10_000;
const accounts = new Map<string, string>();

export function rememberJobAccount(jobId: string, accountId: string): void {
  if (accounts.has(jobId)) return;
  if (accounts.size >= MAX_ENTRIES) {
    const oldest = accounts.keys().next();
    if (!oldest.done) accounts.delete(oldest.value);
  }
  accounts.set(jobId, accountId);
}

export function knownJobAccount(jobId: string): string | null {
  return accounts.get(jobId) ?? null;
}
