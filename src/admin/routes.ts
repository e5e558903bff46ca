import { Hono } from "hono";
import { z } from "zod";
import { createAccount, findAccountByEmail, getAccount, getUsage, grantCredits, setAccountPlan, usageToJson } from "../db/accounts.ts";
import { accountState } from "../account/stub.ts";
import { apiKeyToJson, getApiKey, listApiKeys } from "../db/api-keys.ts";
import { getPlan, listPlans, planToJson } from "../db/plans.ts";
import type { AppEnv } from "../http/app-env.ts";
import { jsonBodyGuard } from "../http/body-guard.ts";
import { AppError } from "../http/errors.ts";
import { validate } from "../http/validate.ts";
import { adminGuard } from "./guard.ts";
import { revokeKey } from "../keys/revoke.ts";
import { issueApiKey } from "../keys/issue.ts";
import { fleetOverview } from "../fleet/overview.ts";

const CreateAccountBody = z.object({
  email: z.email().max(254),
  plan: z.string().min(1).max(64).default("free"),
});
const IssueKeyBody = z.object({ name: z.string().trim().min(1).max(100).default("default") }).default({ name: "default" });
const SetPlanBody = z.object({ plan: z.string().min(1).max(64) });
const GrantCreditsBody = z.object({
  credits: z.number().int().min(1).max(100_000_000),
  reason: z.string().max(500).optional(),
});
const AccountParam = validate("param", z.object({ id: z.string().min(1).max(100) }));
const KeyParam = validate("param", z.object({ key_id: z.string().min(1).max(100) }));

async function requirePlan(db: D1Database, name: string) {
  const plan = await getPlan(db, name);
  if (!plan) {
    const known = (await listPlans(db)).map((p) => p.name).join(", ");
    throw new AppError("invalid_request", `Unknown plan ${JSON.stringify(name)}; known plans: ${known}.`, {
      errors: [{ path: "plan", message: `must be one of: ${known}` }],
    });
  }
  return plan;
}

async function accountJson(db: D1Database, accountId: string) {
  const account = await getAccount(db, accountId);
  const usage = await getUsage(db, accountId);
  if (!account || !usage) throw new AppError("not_found", `No account ${JSON.stringify(accountId)}.`);
  return {
    account_id: account.id,
    email: account.email,
    plan: account.plan,
    created_at: account.createdAt,
    usage: usageToJson(usage),
  };
}

async function revoke(env: Env, keyId: string) {
  const key = await revokeKey(env, keyId);
  if (!key) throw new AppError("not_found", `No API key ${JSON.stringify(keyId)}.`);
  return apiKeyToJson(key);
}

/** Operator API (SPEC section 4), guarded by ADMIN_TOKEN. */
export const admin = new Hono<AppEnv>()
  .use("*", adminGuard, jsonBodyGuard)
  .get("/plans", async (c) => c.json({ plans: (await listPlans(c.env.DB)).map(planToJson) }))
  // The fleet as operators see it: engines running, starting, stopping; the line; grants and failures.
  .get("/fleet", async (c) => c.json(await fleetOverview(c.env)))
  .post("/accounts", validate("json", CreateAccountBody), async (c) => {
    const { email, plan } = c.req.valid("json");
    await requirePlan(c.env.DB, plan);
    if (await findAccountByEmail(c.env.DB, email)) {
      throw new AppError("conflict", `An account with email ${JSON.stringify(email)} already exists.`);
    }
    const account = await createAccount(c.env.DB, { email, plan });
    const { key, secret } = await issueApiKey(c.env.DB, account.id, "default");
    return c.json({ account_id: account.id, email: account.email, plan: account.plan, key_id: key.id, api_key: secret }, 201);
  })
  .get("/accounts/:id", AccountParam, async (c) => c.json(await accountJson(c.env.DB, c.req.valid("param").id)))
  .get("/accounts/:id/keys", AccountParam, async (c) => {
    const { id } = c.req.valid("param");
    await accountJson(c.env.DB, id);
    return c.json({ keys: (await listApiKeys(c.env.DB, id)).map(apiKeyToJson) });
  })
  .post("/accounts/:id/keys", AccountParam, validate("json", IssueKeyBody), async (c) => {
    const { id } = c.req.valid("param");
    await accountJson(c.env.DB, id);
    const { key, secret } = await issueApiKey(c.env.DB, id, c.req.valid("json").name);
    return c.json({ ...apiKeyToJson(key), api_key: secret }, 201);
  })
  .put("/accounts/:id/plan", AccountParam, validate("json", SetPlanBody), async (c) => {
    const { id } = c.req.valid("param");
    const plan = await requirePlan(c.env.DB, c.req.valid("json").plan);
    if (!(await setAccountPlan(c.env.DB, id, plan.name))) throw new AppError("not_found", `No account ${JSON.stringify(id)}.`);
    // Key lookups may be cached: the account's Durable Object applies the new limits from the next request.
    await accountState(c.env, id).setPlanLimits({ requestsPerMinute: plan.requestsPerMinute, maxActiveJobs: plan.maxActiveJobs });
    return c.json(await accountJson(c.env.DB, id));
  })
  .post("/accounts/:id/credits", AccountParam, validate("json", GrantCreditsBody), async (c) => {
    const { id } = c.req.valid("param");
    const { credits, reason } = c.req.valid("json");
    if (!(await grantCredits(c.env.DB, id, credits))) throw new AppError("not_found", `No account ${JSON.stringify(id)}.`);
    console.log(`[${c.get("requestId")}] granted ${credits} credits to ${id}${reason ? `: ${reason}` : ""}`);
    return c.json(await accountJson(c.env.DB, id));
  })
  .get("/keys/:key_id", KeyParam, async (c) => {
    const key = await getApiKey(c.env.DB, c.req.valid("param").key_id);
    if (!key) throw new AppError("not_found", "No such API key.");
    return c.json(apiKeyToJson(key));
  })
  .post("/keys/:key_id/revoke", KeyParam, async (c) => c.json(await revoke(c.env, c.req.valid("param").key_id)))
  .delete("/keys/:key_id", KeyParam, async (c) => c.json(await revoke(c.env, c.req.valid("param").key_id)));
