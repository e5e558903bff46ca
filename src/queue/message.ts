/** The one message type on the jobs queue: which job to start, for whom. */
export interface JobMessage {
  job_id: string;
  account_id: string;
}
