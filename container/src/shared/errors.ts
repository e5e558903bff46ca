import type { FailureCode } from "#contract";

/**
 * A failure the job reports to the Worker as-is: a SPEC failure code and a
 * message written for the person who submitted the video.
 */
export class JobFailure extends Error {
  readonly code: FailureCode;
  constructor(code: FailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JobFailure";
    this.code = code;
  }
}

/** Why a job's AbortController was aborted; decides what the job still reports. */
export type AbortKind = "canceled" | "inactive" | "shutdown";

export class JobAborted extends Error {
  readonly kind: AbortKind;
  constructor(kind: AbortKind) {
    super(`job aborted: ${kind}`);
    this.name = "JobAborted";
    this.kind = kind;
  }
}

/** The abort reason of a signal, as a JobAborted when it is one of ours. */
export function abortKindOf(signal: AbortSignal): AbortKind | undefined {
  return signal.aborted && signal.reason instanceof JobAborted ? signal.reason.kind : undefined;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
