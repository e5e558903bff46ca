/** The fleet's one FleetScheduler, and the capacity this deployment was given. */
export function fleetScheduler(env: Env) {
  return env.FLEET.get(env.FLEET.idFromName("fleet"));
}

/** ENGINE_MAX_INSTANCES: must equal `max_instances` of the container in wrangler.toml (a test checks). */
export function fleetCapacity(env: Env): number {
  const value = Number(env.ENGINE_MAX_INSTANCES);
  return Number.isInteger(value) && value > 0 ? value : 1;
}
