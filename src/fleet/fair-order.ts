/**
 * The capacity rule, as a pure function: free engines go to accounts in turn.
 * The next grant goes to the account with the fewest jobs running; among
 * those, to the one served longest ago (never served first); within an
 * account, to its oldest waiting job. An account with fifty queued jobs thus
 * gets one engine per round, like an account with one.
 */
export interface WaitingJob {
  jobId: string;
  accountId: string;
  /** Arrival order (smaller waited longer). */
  seq: number;
}

export interface FairState {
  /** Jobs running (holding an engine) per account. */
  running: ReadonlyMap<string, number>;
  /** Monotonic number of each account's latest grant; absent = never served. */
  lastServed: ReadonlyMap<string, number>;
}

interface AccountQueue {
  accountId: string;
  jobs: WaitingJob[];
  next: number;
  running: number;
  lastServed: number;
}

function before(a: AccountQueue, b: AccountQueue): boolean {
  if (a.running !== b.running) return a.running < b.running;
  if (a.lastServed !== b.lastServed) return a.lastServed < b.lastServed;
  return (a.jobs[a.next]?.seq ?? Infinity) < (b.jobs[b.next]?.seq ?? Infinity);
}

/** A small binary heap of account queues ordered by `before`. */
class AccountHeap {
  private readonly items: AccountQueue[] = [];
  get size(): number {
    return this.items.length;
  }
  push(item: AccountQueue): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }
  pop(): AccountQueue | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < items.length && before(items[l]!, items[best]!)) best = l;
        if (r < items.length && before(items[r]!, items[best]!)) best = r;
        if (best === i) break;
        [items[i], items[best]] = [items[best]!, items[i]!];
        i = best;
      }
    }
    return top;
  }
}

/**
 * The order in which the waiting jobs would be granted engines if engines
 * freed up one at a time and nothing else arrived: element 0 is next.
 */
export function fairOrder(waiting: readonly WaitingJob[], state: FairState): WaitingJob[] {
  const byAccount = new Map<string, WaitingJob[]>();
  for (const job of [...waiting].sort((a, b) => a.seq - b.seq)) {
    const list = byAccount.get(job.accountId);
    if (list) list.push(job);
    else byAccount.set(job.accountId, [job]);
  }
  const heap = new AccountHeap();
  for (const [accountId, jobs] of byAccount) {
    heap.push({
      accountId,
      jobs,
      next: 0,
      running: state.running.get(accountId) ?? 0,
      lastServed: state.lastServed.get(accountId) ?? -1,
    });
  }
  let clock = Math.max(0, ...state.lastServed.values()) + 1;
  const order: WaitingJob[] = [];
  while (heap.size > 0) {
    const queue = heap.pop()!;
    order.push(queue.jobs[queue.next]!);
    queue.next += 1;
    queue.running += 1;
    queue.lastServed = clock++;
    if (queue.next < queue.jobs.length) heap.push(queue);
  }
  return order;
}
