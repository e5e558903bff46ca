/**
 * What the fleet may grant, from the Worker's settings: every caller passes
 * these with its call (the FleetScheduler also keeps the last ones it saw for
 * its alarm), so a change of settings applies from the next call.
 */
import { engineStartBudgetSeconds, engineStopGraceSeconds, fleetCapacity } from "../settings.ts";

export interface FleetLimits {
  /** Engines that may be held at once (ENGINE_MAX_INSTANCES, within the account's vCPU). */
  capacity: number;
  /** How long a stopping instance may keep its slot when the platform's exit notice is lost; 0: no instances (a process engine). */
  stopGraceMs: number;
  /** How long a job keeps retrying starts that failed for reasons not its own. */
  startBudgetMs: number;
}

export function fleetLimits(env: Env): FleetLimits {
  return {
    capacity: fleetCapacity(env),
    // ENGINE_URL: one engine process, no instances that linger after a job.
    stopGraceMs: env.ENGINE_URL ? 0 : engineStopGraceSeconds(env) * 1000,
    startBudgetMs: engineStartBudgetSeconds(env) * 1000,
  };
}
