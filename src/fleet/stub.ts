/** The fleet's one FleetScheduler. */
export function fleetScheduler(env: Env) {
  return env.FLEET.get(env.FLEET.idFromName("fleet"));
}
