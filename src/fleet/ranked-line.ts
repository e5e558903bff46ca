/**
 * The waiting line in memory, ordered by (round, seq), answering "what is
 * this job's place" in O(log n): entries live in sorted blocks of at most
 * 2 * BLOCK entries, and a Fenwick tree over the block sizes gives the count
 * of entries before any block. Insert and remove touch one block (O(BLOCK))
 * plus O(log n) to find it; a split or an emptied block rebuilds the tree
 * over the blocks (O(n / BLOCK), once every BLOCK changes at most).
 *
 * It is a cache of the `waiting` table (fleet-tables.ts), rebuilt from it
 * whenever the Durable Object starts; the table stays the truth.
 */
export interface LineEntry {
  jobId: string;
  round: number;
  seq: number;
}

const BLOCK = 128;

function before(a: LineEntry, b: LineEntry): boolean {
  return a.round !== b.round ? a.round < b.round : a.seq < b.seq;
}

export class RankedLine {
  private blocks: LineEntry[][] = [];
  private readonly byJob = new Map<string, LineEntry>();
  /** Fenwick tree (1-based) over block sizes. */
  private tree: number[] = [0];

  /** Builds a line from entries in any order. */
  static from(entries: Iterable<LineEntry>): RankedLine {
    const line = new RankedLine();
    const sorted = [...entries].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
    for (const entry of sorted) line.byJob.set(entry.jobId, entry);
    for (let i = 0; i < sorted.length; i += BLOCK) line.blocks.push(sorted.slice(i, i + BLOCK));
    line.rebuild();
    return line;
  }

  get size(): number {
    return this.byJob.size;
  }

  has(jobId: string): boolean {
    return this.byJob.has(jobId);
  }

  first(): LineEntry | undefined {
    return this.blocks[0]?.[0];
  }

  insert(entry: LineEntry): void {
    if (this.byJob.has(entry.jobId)) this.remove(entry.jobId);
    this.byJob.set(entry.jobId, entry);
    if (this.blocks.length === 0) {
      this.blocks.push([entry]);
      this.rebuild();
      return;
    }
    const b = this.blockFor(entry);
    const block = this.blocks[b]!;
    block.splice(this.indexIn(block, entry), 0, entry);
    if (block.length > 2 * BLOCK) {
      this.blocks.splice(b, 1, block.slice(0, BLOCK), block.slice(BLOCK));
      this.rebuild();
    } else {
      this.add(b, 1);
    }
  }

  remove(jobId: string): boolean {
    const entry = this.byJob.get(jobId);
    if (!entry) return false;
    this.byJob.delete(jobId);
    const b = this.blockFor(entry);
    const block = this.blocks[b]!;
    const i = this.indexIn(block, entry);
    block.splice(i, 1);
    if (block.length === 0) {
      this.blocks.splice(b, 1);
      this.rebuild();
    } else {
      this.add(b, -1);
    }
    return true;
  }

  /** 1-based place in line, or null when the job is not in it. */
  rank(jobId: string): number | null {
    const entry = this.byJob.get(jobId);
    if (!entry) return null;
    const b = this.blockFor(entry);
    return this.prefix(b) + this.indexIn(this.blocks[b]!, entry) + 1;
  }

  /** The block that holds (or would hold) `entry`: the first whose last entry is not before it. */
  private blockFor(entry: LineEntry): number {
    let lo = 0;
    let hi = this.blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const block = this.blocks[mid]!;
      if (before(block[block.length - 1]!, entry)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first entry of `block` that is not before `entry`. */
  private indexIn(block: LineEntry[], entry: LineEntry): number {
    let lo = 0;
    let hi = block.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(block[mid]!, entry)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private rebuild(): void {
    const n = this.blocks.length;
    const tree = new Array<number>(n + 1).fill(0);
    for (let i = 1; i <= n; i += 1) {
      tree[i]! += this.blocks[i - 1]!.length;
      const parent = i + (i & -i);
      if (parent <= n) tree[parent]! += tree[i]!;
    }
    this.tree = tree;
  }

  private add(block: number, delta: number): void {
    for (let i = block + 1; i < this.tree.length; i += i & -i) this.tree[i]! += delta;
  }

  /** Entries in blocks before `block`. */
  private prefix(block: number): number {
    let sum = 0;
    for (let i = block; i > 0; i -= i & -i) sum += this.tree[i]!;
    return sum;
  }
}
