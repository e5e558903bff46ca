/** The dashboard's webhooks pages: add (secret shown once), refuse bad input, flag disabled endpoints, act on one. */
import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { alertText, csrfTokenIn, Visitor } from "./dashboard-helpers.ts";
import { FakeReceiver, RECEIVER_ORIGIN } from "./webhooks-helpers.ts";

let receiver: FakeReceiver;
beforeEach(() => {
  receiver = new FakeReceiver();
  receiver.install();
});
afterEach(() => receiver.uninstall());

async function signedIn(): Promise<{ visitor: Visitor; token: string; accountId: string }> {
  const visitor = new Visitor();
  const { email } = await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/webhooks")).text());
  const row = await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first<{ id: string }>();
  return { visitor, token, accountId: row?.id ?? "" };
}

async function endpointsOf(accountId: string) {
  const { results } = await env.DB.prepare(`SELECT id, url, events, secret FROM webhook_endpoints WHERE account_id = ?`)
    .bind(accountId)
    .all<{ id: string; url: string; events: string; secret: string }>();
  return results;
}

describe("webhooks pages", () => {
  it("adds an endpoint, shows its secret once, and lists it", async () => {
    const { visitor, token, accountId } = await signedIn();
    const res = await visitor.post("/dashboard/webhooks", { csrf_token: token, url: `${RECEIVER_ORIGIN}/dash`, description: "prod", events: "job.completed" });
    expect(res.status).toBe(200);
    const html = await res.text();
    const [stored] = await endpointsOf(accountId);
    expect(stored).toMatchObject({ url: `${RECEIVER_ORIGIN}/dash`, events: '["job.completed"]' });
    expect(html).toContain(`<code id="new-secret">${stored!.secret}</code>`);
    expect(html).toContain("will not be shown again");
    const list = await (await visitor.get("/dashboard/webhooks")).text();
    expect(list).toContain(`${RECEIVER_ORIGIN}/dash`);
    expect(list).not.toContain(stored!.secret);
  });

  it("refuses a private URL with the reason, storing nothing", async () => {
    const { visitor, token, accountId } = await signedIn();
    const res = await visitor.post("/dashboard/webhooks", { csrf_token: token, url: "https://169.254.169.254/x" });
    expect(res.status).toBe(400);
    expect(alertText(await res.text())).toContain("private");
    expect(await endpointsOf(accountId)).toHaveLength(0);
  });

  it("flags an endpoint the service disabled, and the owner can enable it again and send a test", async () => {
    const { visitor, token, accountId } = await signedIn();
    await visitor.post("/dashboard/webhooks", { csrf_token: token, url: `${RECEIVER_ORIGIN}/flagged` });
    const [stored] = await endpointsOf(accountId);
    await env.DB.prepare(`UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'failing', disabled_at = ? WHERE id = ?`)
      .bind(new Date().toISOString(), stored!.id)
      .run();
    expect(await (await visitor.get("/dashboard/webhooks")).text()).toContain("Disabled: deliveries failed for about three days");
    const enabled = await visitor.post(`/dashboard/webhooks/${stored!.id}/enable`, { csrf_token: token });
    expect(enabled.status).toBe(200);
    expect(await enabled.text()).toContain("Enabled");
    const tested = await visitor.post(`/dashboard/webhooks/${stored!.id}/test`, { csrf_token: token });
    expect(await tested.text()).toContain("webhook.test");
    const deadline = Date.now() + 45_000; // A budget for a stuck run: the queue delivers late on a loaded machine.
    while (!receiver.requests.some((r) => r.url === `${RECEIVER_ORIGIN}/flagged`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(receiver.requests.filter((r) => r.url === `${RECEIVER_ORIGIN}/flagged`)).toHaveLength(1);
    // Another visitor cannot act on it.
    const other = await signedIn();
    const res = await other.visitor.post(`/dashboard/webhooks/${stored!.id}/delete`, { csrf_token: other.token });
    expect(res.status).toBe(200);
    expect(await endpointsOf(accountId)).toHaveLength(1);
  });
});
