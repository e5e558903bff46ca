/**
 * The one message type on the jobs queue: which job to start, for whom, and
 * (for a grant or a retry) the fleet's dispatch chain number the message
 * belongs to. Absent or 0: the submission's own message.
 */
export interface JobMessage {
  job_id: string;
  account_id: string;
  dispatch?: number;
  /** A clip edit of the (completed) job to start instead of the job itself (src/jobs/clip-edit/dispatch.ts). */
  edit_id?: string;
}
