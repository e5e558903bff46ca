import { JobFailure } from "../../src/shared/errors.ts";

/** The JobFailure a stage rejects with; anything else (or success) fails the test. */
export async function failureOf(promise: Promise<unknown>): Promise<JobFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof JobFailure) return error;
    throw error;
  }
  throw new Error("expected the stage to fail with a JobFailure");
}
