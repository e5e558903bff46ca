/** The Durable Object of one account (named by the account id). */
export function accountState(env: Env, accountId: string) {
  return env.ACCOUNTS.get(env.ACCOUNTS.idFromName(accountId));
}
