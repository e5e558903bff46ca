/** `clipjobs webhooks list|add|remove|test|deliveries`: the account's webhook endpoints and their delivery log. */
import type { CreateWebhookBody, Webhook } from "./client.ts";
import { exactlyOne, limitOption, printJson, UsageError, type Context } from "./cli-context.ts";
import { table } from "./format.ts";

export const WEBHOOKS_HELP = `clipjobs webhooks <list|add|remove|test|deliveries> [--json]

  webhooks list                                   the account's endpoints
  webhooks add <https_url> [--events LIST] [--description TEXT]
                                                  LIST: * (default) or comma-separated job.queued,job.processing,
                                                  job.completed,job.failed,job.canceled; prints the signing secret once
  webhooks remove <webhook_id>                    deletes the endpoint; its pending retries stop
  webhooks test <webhook_id>                      sends a webhook.test event
  webhooks deliveries <webhook_id> [--limit N]    the delivery log, newest first (1-100, default 20)
`;

function eventsOf(webhook: Webhook): string {
  return webhook.events === "*" ? "*" : webhook.events.join(",");
}

function enabledOf(webhook: Webhook): string {
  if (webhook.enabled) return "yes";
  return webhook.disabled_reason ? `no (${webhook.disabled_reason})` : "no";
}

function parseEvents(text: string | undefined): CreateWebhookBody["events"] {
  if (text === undefined) return undefined;
  if (text.trim() === "*") return "*";
  const events = text.split(",").map((event) => event.trim()).filter((event) => event.length > 0);
  if (events.length === 0) throw new UsageError("--events needs * or at least one event type");
  // Unknown names go to the API, which answers invalid_webhook_event naming the known ones.
  return events as Exclude<CreateWebhookBody["events"], "*" | undefined>;
}

async function list({ client, io, values, args }: Context): Promise<number> {
  if (args.length > 0) throw new UsageError("webhooks list takes no arguments");
  const { webhooks } = await client.listWebhooks();
  if (values.json) return printJson(io, webhooks), 0;
  if (webhooks.length === 0) {
    io.stdout("No webhook endpoints.\n");
    return 0;
  }
  const rows = webhooks.map((w) => [w.webhook_id, enabledOf(w), eventsOf(w), w.url, w.description]);
  io.stdout(`${table(["webhook_id", "enabled", "events", "url", "description"], rows)}\n`);
  return 0;
}

async function add({ client, io, values, args }: Context): Promise<number> {
  const url = exactlyOne(args, "https URL");
  const events = parseEvents(values.events);
  const created = await client.createWebhook({
    url,
    ...(events === undefined ? {} : { events }),
    ...(values.description === undefined ? {} : { description: values.description }),
  });
  if (values.json) return printJson(io, created), 0;
  io.stdout(`${created.webhook_id}  ${created.url}  events ${eventsOf(created)}\n`);
  io.stdout(`secret ${created.secret}\n`);
  io.stderr("The signing secret is shown only now: store it where your receiver verifies signatures.\n");
  return 0;
}

async function remove({ client, io, values, args }: Context): Promise<number> {
  const webhookId = exactlyOne(args, "webhook id");
  await client.deleteWebhook(webhookId);
  if (values.json) printJson(io, { webhook_id: webhookId, deleted: true });
  else io.stdout(`${webhookId}  deleted\n`);
  return 0;
}

async function test({ client, io, values, args }: Context): Promise<number> {
  const webhookId = exactlyOne(args, "webhook id");
  const delivery = await client.testWebhook(webhookId);
  if (values.json) return printJson(io, delivery), 0;
  io.stdout(`${delivery.delivery_id}  ${delivery.event_type}  ${delivery.status}\n`);
  io.stderr(`See how it went: clipjobs webhooks deliveries ${webhookId}\n`);
  return 0;
}

async function deliveries({ client, io, values, args }: Context): Promise<number> {
  const webhookId = exactlyOne(args, "webhook id");
  const limit = limitOption(values) ?? 20;
  const page = await client.listWebhookDeliveries(webhookId, { limit });
  if (values.json) return printJson(io, page), 0;
  if (page.deliveries.length === 0) {
    io.stdout("No deliveries.\n");
    return 0;
  }
  const rows = page.deliveries.map((d) => [
    d.delivery_id,
    d.event_type,
    d.status,
    String(d.attempts),
    d.last_status_code === null ? (d.last_error ?? "") : String(d.last_status_code),
    d.created_at,
  ]);
  io.stdout(`${table(["delivery_id", "event", "status", "attempts", "last answer", "created"], rows)}\n`);
  if (page.next_cursor) io.stdout("(more deliveries: raise --limit)\n");
  return 0;
}

const SUBCOMMANDS: Record<string, (context: Context) => Promise<number>> = { list, add, remove, test, deliveries };

export async function webhooks(context: Context): Promise<number> {
  const [subcommand, ...args] = context.args;
  const run = subcommand === undefined ? undefined : SUBCOMMANDS[subcommand];
  if (!run) throw new UsageError(subcommand === undefined ? "which one: list, add, remove, test or deliveries?" : `unknown subcommand "${subcommand}"`);
  return run({ ...context, args });
}
