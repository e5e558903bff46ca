/** A span of the source in seconds, [start, end): a silence, a speech run. */
export interface Interval {
  start: number;
  end: number;
}
