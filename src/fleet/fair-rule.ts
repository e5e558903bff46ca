/**
 * The capacity rule. Engines are granted in rounds: a waiting job's round is
 * fixed when it joins the line, and the line is served in (round, arrival)
 * order. The fleet's current round V is the round of the latest grant.
 *
 * A job of account `a` joins at round max(V + held(a), last(a) + 1), where
 * held(a) is how many engines `a` holds now and last(a) the round of its
 * latest job to join, waiting, running or ended (none: -infinity; kept past
 * the job's end, as fair queuing keeps a flow's finish tag: otherwise an
 * account whose job ended rejoins at the current round, and while such
 * accounts keep arriving the current round never moves on and a deep
 * queue's later rounds wait as long as the arrivals last). So:
 *
 * - an account's own jobs keep their arrival order and take one round each:
 *   fifty queued jobs get one engine per round, like an account with one;
 * - an account already holding k engines joins k rounds later than an account
 *   holding none: the fewest-engines-first rule of the earlier scheduler, with
 *   the count taken when the job joins;
 * - a requeued job (its engine was stopped under it) goes first: round V,
 *   ahead of every arrival.
 *
 * The bound (docs/fleet.md, "The line"): every account's waiting jobs have
 * distinct rounds, all >= V, and a job never changes round while it waits,
 * so before a job of round R at most (R - V + 1) jobs of any one account can
 * be granted. A job that joins at R = V (its account holds no engine and
 * had no job join in this round) is therefore
 * granted before at most one job of every other account, whatever those
 * accounts have queued; and no job waits forever, since each account joins
 * at most once a round, so round V drains and V grows.
 *
 * Why not the exact earlier rule (fewest running now, then served longest
 * ago)? Its order depends on every account's running count at grant time, so
 * one job ending reorders the whole line and a place in line cannot be kept
 * up to date without re-sorting it. Rounds fixed at arrival keep the line a
 * plain index (next grant: O(log n); a job's place: O(log n), ranked-line.ts).
 */
export function roundFor(current: number, held: number, lastWaitingRound: number | null): number {
  const byHeld = current + held;
  return lastWaitingRound === null ? byHeld : Math.max(byHeld, lastWaitingRound + 1);
}

export interface LineJob {
  jobId: string;
  accountId: string;
  round: number;
  seq: number;
}

/** Line order: round, then arrival (requeued jobs carry negative sequence numbers, so they lead their round). */
export function lineOrder(a: Pick<LineJob, "round" | "seq">, b: Pick<LineJob, "round" | "seq">): number {
  return a.round !== b.round ? a.round - b.round : a.seq - b.seq;
}
