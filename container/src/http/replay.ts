/**
 * The engine's memory of the signed requests it accepted (StartJob, cancel):
 * each signature's nonce is accepted once. A nonce is kept for as long as its
 * signature could still be fresh (twice the tolerance, for clock skew either
 * way), so the ledger holds at most the requests of the last ten minutes.
 *
 * It lives in the process: an engine restarted within that window forgets
 * what it saw. In production an engine instance is a Container reachable
 * only through the Worker's binding, one per job; docs/architecture.md "Engine
 * credentials" says what that leaves.
 */
import { ENGINE_SIGNATURE_TOLERANCE_SECONDS } from "#contract";

export class ReplayLedger {
  private readonly seen = new Map<string, number>();

  /** True the first time a nonce is presented (and remembers it); false for a replay. */
  accept(nonce: string, timestampSeconds: number, nowMs: number = Date.now()): boolean {
    this.prune(nowMs);
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, (timestampSeconds + 2 * ENGINE_SIGNATURE_TOLERANCE_SECONDS) * 1000);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(nowMs: number): void {
    for (const [nonce, until] of this.seen) if (until < nowMs) this.seen.delete(nonce);
  }
}
