/**
 * What operators see of the fleet (GET /admin/v1/fleet, the dashboard's
 * fleet page, `npm run admin -- fleet`): the FleetScheduler's own counts
 * (running, starting, waiting, stopping, the oldest wait, grants and start
 * failures per minute) beside the last hour's failed jobs by code from D1,
 * and the settings that bound it all.
 */
import { failuresByCodeSince } from "../db/jobs.ts";
import { engineStartBudgetSeconds, engineStopGraceSeconds } from "../settings.ts";
import type { FleetStats } from "./fleet-scheduler.ts";
import { fleetLimits } from "./limits.ts";
import { fleetScheduler } from "./stub.ts";

export interface FleetOverview extends FleetStats {
  /** Failed jobs of the last hour, by error code. */
  job_failures_last_hour: Record<string, number>;
  settings: {
    engine_max_instances: number;
    vcpu_limit: number;
    instance_vcpu: number;
    start_budget_seconds: number;
    stop_grace_seconds: number;
  };
  at: string;
}

export async function fleetOverview(env: Env): Promise<FleetOverview> {
  const limits = fleetLimits(env);
  const [stats, failures] = await Promise.all([
    fleetScheduler(env).stats(limits),
    failuresByCodeSince(env.DB, new Date(Date.now() - 3600_000).toISOString()),
  ]);
  return {
    ...stats,
    job_failures_last_hour: failures,
    settings: {
      engine_max_instances: Number(env.ENGINE_MAX_INSTANCES),
      vcpu_limit: Number(env.ENGINE_VCPU_LIMIT || 1500),
      instance_vcpu: Number(env.ENGINE_INSTANCE_VCPU || 4),
      start_budget_seconds: engineStartBudgetSeconds(env),
      stop_grace_seconds: engineStopGraceSeconds(env),
    },
    at: new Date().toISOString(),
  };
}
