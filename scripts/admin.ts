/**
 * `npm run admin -- <command>`: the operator API for humans.
 * ADMIN_TOKEN comes from the environment or .dev.vars; the Worker's address
 * from CLIPJOBS_URL (default http://127.0.0.1:8787).
 */
import { AdminApiError, AdminClient } from "./lib/admin-client.ts";
import { readDevVars } from "./local-stack/dev-vars.ts";

const HELP = `Usage: npm run admin -- <command> [arguments] [--json]

Commands:
  create-account <email> [--plan <plan>]       Create an account (plan default: free) and its first API key
  show-account <account_id>                    Plan, balance and period of an account
  issue-key <account_id> [--name <name>]       Issue another API key (shown once)
  list-keys <account_id>                       Keys of an account (prefix and last four only)
  revoke-key <key_id>                          Revoke a key; effective on its next request
  set-plan <account_id> <plan>                 Move an account to another plan
  grant-credits <account_id> <credits> [--reason <text>]
                                               Add credits to the current period
  plans                                        The plans table
  fleet                                        Engines running, starting, stopping; jobs waiting, the oldest
                                               wait, grants per minute, failures by code (last hour)
  help                                         This text

Options:
  --json        Print the API's JSON answer instead of a summary
  --url <url>   Worker address (default: $CLIPJOBS_URL or http://127.0.0.1:8787)

Environment: ADMIN_TOKEN (else read from .dev.vars), CLIPJOBS_URL.`;

interface ParsedArgs {
  positional: string[];
  options: Record<string, string | true>;
}

function parseArgs(argv: string[]): ParsedArgs {
  const positional: string[] = [];
  const options: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split("=", 2) as [string, string | undefined];
      if (inline !== undefined) options[name] = inline;
      else if (name === "json" || name === "help") options[name] = true;
      else if (i + 1 < argv.length) options[name] = argv[++i]!;
      else throw new UsageError(`--${name} needs a value`);
    } else positional.push(arg);
  }
  return { positional, options };
}

class UsageError extends Error {}

function need(args: ParsedArgs, index: number, what: string): string {
  const value = args.positional[index];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

function option(args: ParsedArgs, name: string): string | undefined {
  const value = args.options[name];
  return typeof value === "string" ? value : undefined;
}

type Json = Record<string, unknown>;

async function run(args: ParsedArgs, client: AdminClient): Promise<{ json: unknown; text: string }> {
  const command = args.positional[0];
  switch (command) {
    case "create-account": {
      const created = await client.createAccount(need(args, 1, "email"), option(args, "plan") ?? "free");
      return {
        json: created,
        text: [
          `account  ${created.account_id} (${created.email}, plan ${created.plan})`,
          `key      ${created.key_id}`,
          `api key  ${created.api_key}`,
          "",
          "The API key is shown only now. Try:",
          `  curl -s -H "Authorization: Bearer ${created.api_key}" ${baseUrl(args)}/api/v1/usage`,
        ].join("\n"),
      };
    }
    case "show-account": {
      const account = await client.request<Json & { usage: Json }>("GET", `/accounts/${encodeURIComponent(need(args, 1, "account_id"))}`);
      const usage = account.usage;
      return {
        json: account,
        text: [
          `account  ${account.account_id} (${account.email})`,
          `plan     ${account.plan}`,
          `credits  ${usage.credits_remaining} remaining of ${usage.credits_total} + ${usage.credits_granted} granted (used ${usage.credits_used}, reserved ${usage.credits_reserved})`,
          `period   ${usage.period_start} .. ${usage.period_end}`,
        ].join("\n"),
      };
    }
    case "issue-key": {
      const body = option(args, "name") ? { name: option(args, "name") } : {};
      const key = await client.request<Json>("POST", `/accounts/${encodeURIComponent(need(args, 1, "account_id"))}/keys`, body);
      return { json: key, text: `key      ${key.key_id} (${key.name})\napi key  ${key.api_key}\n\nThe API key is shown only now.` };
    }
    case "list-keys": {
      const { keys } = await client.request<{ keys: Json[] }>("GET", `/accounts/${encodeURIComponent(need(args, 1, "account_id"))}/keys`);
      const lines = keys.map(
        (k) => `${k.key_id}  ${String(k.prefix)}...${String(k.last4)}  ${String(k.status).padEnd(7)}  ${k.name}  created ${k.created_at}  last used ${k.last_used_at ?? "never"}`,
      );
      return { json: { keys }, text: lines.length > 0 ? lines.join("\n") : "no keys" };
    }
    case "revoke-key": {
      const key = await client.request<Json>("POST", `/keys/${encodeURIComponent(need(args, 1, "key_id"))}/revoke`);
      return { json: key, text: `key ${key.key_id} revoked at ${key.revoked_at}` };
    }
    case "set-plan": {
      const account = await client.request<Json>("PUT", `/accounts/${encodeURIComponent(need(args, 1, "account_id"))}/plan`, {
        plan: args.positional[2] ?? option(args, "plan") ?? need(args, 2, "plan"),
      });
      return { json: account, text: `account ${account.account_id} is now on plan ${account.plan}` };
    }
    case "grant-credits": {
      const credits = Number(need(args, 2, "credits"));
      if (!Number.isInteger(credits) || credits <= 0) throw new UsageError("credits must be a positive integer");
      const reason = option(args, "reason");
      const account = await client.request<Json & { usage: Json }>(
        "POST",
        `/accounts/${encodeURIComponent(need(args, 1, "account_id"))}/credits`,
        reason ? { credits, reason } : { credits },
      );
      return { json: account, text: `granted ${credits} credits to ${account.account_id}; ${account.usage.credits_remaining} remaining this period` };
    }
    case "plans": {
      const { plans } = await client.request<{ plans: Json[] }>("GET", "/plans");
      const lines = plans.map(
        (p) => `${String(p.name).padEnd(12)} ${String(p.credits_per_period).padStart(9)} credits/month  ${p.requests_per_minute} req/min  ${p.max_active_jobs} active job(s)`,
      );
      return { json: { plans }, text: lines.join("\n") };
    }
    case "fleet": {
      const fleet = await client.request<Json & { settings: Json; job_failures_last_hour: Record<string, number>; start_failures_last_hour: Record<string, number> }>("GET", "/fleet");
      const counts = (c: Record<string, number>) => {
        const entries = Object.entries(c).sort((a, b) => b[1] - a[1]);
        return entries.length > 0 ? entries.map(([code, n]) => `${code} ${n}`).join(", ") : "none";
      };
      return {
        json: fleet,
        text: [
          `engines   ${fleet.running} running, ${fleet.starting} starting, ${fleet.stopping} stopping, ${fleet.free} free of ${fleet.capacity}`,
          `line      ${fleet.waiting} waiting, oldest ${fleet.oldest_wait_seconds === null ? "-" : `${fleet.oldest_wait_seconds} s`}`,
          `grants    ${fleet.grants_last_minute} in the last minute, ${fleet.grants_per_minute_last_hour}/min over the last hour`,
          `failed    ${counts(fleet.job_failures_last_hour)} (jobs, last hour)`,
          `refused   ${counts(fleet.start_failures_last_hour)} (starts retried, last hour)`,
        ].join("\n"),
      };
    }
    default:
      throw new UsageError(command ? `unknown command: ${command}` : "no command given");
  }
}

function baseUrl(args: ParsedArgs): string {
  return (option(args, "url") ?? process.env.CLIPJOBS_URL ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.positional.length === 0 || args.positional[0] === "help" || args.options.help) {
    process.stdout.write(HELP + "\n");
    return args.positional.length === 0 && !args.options.help ? 2 : 0;
  }
  const token = process.env.ADMIN_TOKEN ?? readDevVars().ADMIN_TOKEN;
  if (!token) throw new UsageError("ADMIN_TOKEN is not set (environment or .dev.vars)");
  const result = await run(args, new AdminClient(baseUrl(args), token));
  process.stdout.write((args.options.json ? JSON.stringify(result.json, null, 2) : result.text) + "\n");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) process.stderr.write(`error: ${err.message}\n\n${HELP}\n`);
    else if (err instanceof AdminApiError) process.stderr.write(`error: ${err.message}\n`);
    else if (err instanceof TypeError && /fetch failed/.test(err.message)) {
      process.stderr.write(`error: cannot reach the Worker at ${process.env.CLIPJOBS_URL ?? "http://127.0.0.1:8787"} (is \`npm run dev\` running?)\n`);
    } else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
