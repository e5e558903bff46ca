/**
 * Steering a submission: the prompt and removal settings sent with
 * a job override those of its configuration (saved or default), and its
 * time_range is checked against that configuration and the service's
 * longest source. One module for the API and the dashboard's submit form.
 */
import { ClipConfig, type RemoveSilence, type TimeRange } from "#contract";
import { DomainError } from "../domain/errors.ts";

/** What a submission may set on top of its configuration; undefined: the configuration's value. */
export interface SteeringInput {
  /** null: no prompt, whatever the configuration says. */
  prompt?: string | null;
  removeSilence?: RemoveSilence;
  removeFillers?: boolean;
  /** Shape-checked only (numbers); checkTimeRange gives the rules. */
  timeRange?: { start_seconds: number; end_seconds: number } | null;
}

/** The configuration with the submission's overrides, checked by the contract's schema like any configuration. */
export function steeredConfig(base: ClipConfig, input: SteeringInput): ClipConfig {
  const merged = {
    ...base,
    ...(input.prompt !== undefined ? { prompt: input.prompt } : {}),
    ...(input.removeSilence !== undefined ? { remove_silence: input.removeSilence } : {}),
    ...(input.removeFillers !== undefined ? { remove_fillers: input.removeFillers } : {}),
  };
  const parsed = ClipConfig.safeParse(merged);
  if (!parsed.success) {
    throw new DomainError("invalid_request", "The submission's steering fields are not valid.", {
      errors: parsed.error.issues.map((issue) => ({ path: issue.path.join(".") || "(body)", message: issue.message })),
    });
  }
  return parsed.data;
}

function badRange(detail: string, path = "time_range"): never {
  throw new DomainError("invalid_time_range", detail, { errors: [{ path, message: detail }] });
}

/**
 * A range the service can clip: 0 <= start < end, at least one clip long,
 * ending within the longest source taken. Whether it lies inside this
 * particular source is known after the probe (time_range_outside_source).
 */
export function checkTimeRange(range: SteeringInput["timeRange"], config: ClipConfig, maxSourceSeconds: number): TimeRange | null {
  if (range == null) return null;
  const { start_seconds: start, end_seconds: end } = range;
  if (!Number.isFinite(start) || start < 0) badRange("time_range.start_seconds must be 0 or more.", "time_range.start_seconds");
  if (!Number.isFinite(end) || end <= start) badRange("time_range.end_seconds must be greater than start_seconds.", "time_range.end_seconds");
  if (end > maxSourceSeconds) {
    badRange(`time_range.end_seconds is past ${maxSourceSeconds} s, the longest video the service takes.`, "time_range.end_seconds");
  }
  if (end - start < config.min_clip_seconds) {
    badRange(
      `time_range is ${round3(end - start)} s long, shorter than the configuration's ${config.min_clip_seconds} s minimum clip length.`,
    );
  }
  return { start_seconds: start, end_seconds: end };
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** "90", "90.5", "1:30", "1:02:03.5" -> seconds; null when it is none of these. */
export function parseClock(text: string): number | null {
  const match = /^(?:(?:(\d{1,2}):)?(\d{1,3}):)?(\d{1,5}(?:\.\d{1,3})?)$/.exec(text.trim());
  if (!match) return null;
  const [, hours, minutes, seconds] = match;
  if ((hours !== undefined || minutes !== undefined) && Number(seconds) >= 60) return null;
  if (hours !== undefined && Number(minutes) >= 60) return null;
  return Number(hours ?? 0) * 3600 + Number(minutes ?? 0) * 60 + Number(seconds);
}

/** The dashboard's From/To fields: both empty is no range; otherwise both must read as times. */
export function rangeFromForm(from: string, to: string): SteeringInput["timeRange"] {
  if (from.trim() === "" && to.trim() === "") return null;
  const start = from.trim() === "" ? 0 : parseClock(from);
  const end = parseClock(to);
  if (start === null) badRange(`From: "${from}" is not a time (seconds, mm:ss or h:mm:ss).`, "time_range.start_seconds");
  if (end === null) badRange(to.trim() === "" ? "To: give where the range ends." : `To: "${to}" is not a time (seconds, mm:ss or h:mm:ss).`, "time_range.end_seconds");
  return { start_seconds: start, end_seconds: end };
}
