/**
 * The AccountState Durable Object: the account's object (src/account/) with
 * what its watchdog does to an overdue job, which is the job lifecycle's.
 */
import { AccountObject } from "../account/account-state.ts";
import { expireOverdueJob } from "./lifecycle.ts";

export class AccountState extends AccountObject {
  protected override expireOverdueJob(accountId: string, jobId: string): Promise<"ended" | "repaired"> {
    return expireOverdueJob(this.env, accountId, jobId);
  }
}
