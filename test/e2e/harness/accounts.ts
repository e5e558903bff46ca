/** A fresh account per test, so one test's active job never blocks another's. */
import { randomBytes } from "node:crypto";
import { AdminClient } from "../../../scripts/lib/admin-client.ts";
import { ApiClient } from "../../../scripts/local-stack/api-client.ts";
import type { SharedStackInfo } from "./shared-stack-config.ts";

export interface TestAccount {
  accountId: string;
  email: string;
  client: ApiClient;
  /** The account's API key (for clients other than ApiClient, e.g. the typed client). */
  apiKey: string;
}

export async function newAccount(stack: Pick<SharedStackInfo, "workerUrl" | "adminToken">, plan: "free" | "pro" = "pro"): Promise<TestAccount> {
  const email = `e2e-${Date.now()}-${randomBytes(4).toString("hex")}@example.test`;
  const created = await new AdminClient(stack.workerUrl, stack.adminToken).createAccount(email, plan);
  return { accountId: created.account_id, email, client: new ApiClient(stack.workerUrl, created.api_key), apiKey: created.api_key };
}
