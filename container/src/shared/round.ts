/** Seconds to the millisecond, as every report and transcript carries them. */
export function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
