/**
 * The fleet's clock. Production reads the wall clock; the fleet simulation
 * (test/worker/fleet/) replaces `now` with its simulated clock, so the
 * scheduler's grace periods, start budget and overdue dispatches run in
 * simulated hours. A seam object (like engineHosts) because Worker code,
 * Durable Objects and tests share one isolate there.
 */
export const fleetTime = {
  now(): number {
    return Date.now();
  },
};
