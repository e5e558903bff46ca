/**
 * POST /api/v1/webhooks with generated bodies (fast-check): each member valid
 * or broken in its own ways, plus members the API does not know. Valid bodies
 * are stored exactly as sent; every other body is a documented 400 that
 * stores nothing. Every answer passes the served OpenAPI document's oracle.
 */
import { env } from "cloudflare:test";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { JOB_EVENT_TYPES } from "../../src/webhooks/events.ts";
import { createAccount } from "./helpers.ts";
import { checkResponse } from "./fuzz/oracle.ts";
import { ORIGIN, send } from "./fuzz/invoke.ts";
import { fuzzParameters } from "./fuzz/runs.ts";

const RUNS = 1000;

/** A member of the body and whether the API must accept it (undefined: left out). */
interface Part {
  value: unknown;
  valid: boolean;
}

const publicUrl: fc.Arbitrary<Part> = fc
  .tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.constantFrom("example.com", "hooks.example.org", "api.customer.io"), fc.webPath())
  .map(([label, domain, path]) => ({ value: `https://${label}.${domain}${path}`, valid: true }));

const refusedUrl: fc.Arbitrary<Part> = fc
  .oneof(
    fc.constantFrom(
      "http://hooks.example.com/x",
      "https://127.0.0.1/x",
      "https://[::1]/x",
      "https://[::ffff:10.0.0.1]/x",
      "https://169.254.169.254/latest",
      "https://0x7f.1/x",
      "https://localhost/x",
      "https://intranet/x",
      "https://db.internal/x",
      "https://user:pass@example.com/x",
      "ftp://example.com/x",
      "javascript:alert(1)",
      "",
      " ",
      `https://example.com/${"a".repeat(2050)}`,
    ),
    fc.string({ maxLength: 30 }).filter((s) => !URL.canParse(s.trim())),
    fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 })),
  )
  .map((value) => ({ value, valid: false }));

const events: fc.Arbitrary<Part | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constant({ value: "*", valid: true }),
  fc.subarray([...JOB_EVENT_TYPES], { minLength: 1 }).map((value) => ({ value, valid: true })),
  fc.constantFrom<unknown>([], "all", ["job.exploded"], ["webhook.test"], [1], null, 7, { "job.queued": true }).map((value) => ({ value, valid: false })),
);

const description: fc.Arbitrary<Part | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 40, unit: "grapheme" }).map((value) => ({ value, valid: true })),
  fc.integer({ min: 0, max: 700 }).map((n) => ({ value: "d".repeat(n), valid: n <= 500 })),
  fc.oneof(fc.integer(), fc.constant(null), fc.boolean()).map((value) => ({ value, valid: false })),
);

const enabled: fc.Arbitrary<Part | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.boolean().map((value) => ({ value, valid: true })),
  fc.constantFrom<unknown>("true", 1, null).map((value) => ({ value, valid: false })),
);

const body = fc.record({
  url: fc.oneof(publicUrl, refusedUrl, fc.constant(undefined)),
  events,
  description,
  enabled,
  extra: fc.option(fc.dictionary(fc.stringMatching(/^x_[a-z]{1,8}$/), fc.jsonValue(), { maxKeys: 2 }), { nil: undefined }),
});

const outcomes = new Map<string, number>();
afterAll(() => console.log(`fuzz webhooks: ${RUNS} bodies; answers ${JSON.stringify(Object.fromEntries(outcomes))}`));

async function storedEndpoints(accountId: string) {
  const { results } = await env.DB.prepare(`SELECT id, url, events, description, enabled FROM webhook_endpoints WHERE account_id = ?`)
    .bind(accountId)
    .all<{ id: string; url: string; events: string; description: string; enabled: number }>();
  return results;
}

describe("POST /api/v1/webhooks with generated bodies", () => {
  it(`accepts exactly the valid ones and stores nothing for the rest (${RUNS} bodies)`, { timeout: 900_000 }, async () => {
    const account = await createAccount("unmetered");
    await fc.assert(
      fc.asyncProperty(body, async (generated) => {
        const sent: Record<string, unknown> = { ...(generated.extra ?? {}) };
        for (const name of ["url", "events", "description", "enabled"] as const) {
          const part = generated[name];
          if (part !== undefined) sent[name] = part.value;
        }
        const valid = generated.url !== undefined && [generated.url, generated.events, generated.description, generated.enabled].every((p) => p === undefined || p.valid);
        const res = await send(
          new Request(`${ORIGIN}/api/v1/webhooks`, {
            method: "POST",
            headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
            body: JSON.stringify(sent),
          }),
        );
        const answer = (await checkResponse(res, { method: "post", path: "/api/v1/webhooks" })) as Record<string, unknown>;
        const stored = await storedEndpoints(account.accountId);
        const key = res.status === 201 ? "201" : `${res.status} ${String(answer.code)}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        if (!valid) {
          expect(res.status, JSON.stringify(sent).slice(0, 300)).toBe(400);
          expect(["invalid_request", "invalid_webhook_url", "invalid_webhook_event"]).toContain(answer.code);
          expect(stored).toHaveLength(0);
          return;
        }
        expect(res.status, JSON.stringify(sent).slice(0, 300)).toBe(201);
        expect(stored).toHaveLength(1);
        const row = stored[0]!;
        expect(row.url).toBe(new URL(generated.url!.value as string).toString());
        const expectedEvents = generated.events?.value ?? "*";
        expect(row.events === "*" ? "*" : JSON.parse(row.events)).toEqual(expectedEvents);
        expect(row.description).toBe(generated.description?.value ?? "");
        expect(row.enabled).toBe(generated.enabled?.value === false ? 0 : 1);
        // Keep under the 10-endpoint limit for the next run.
        await env.DB.prepare(`DELETE FROM webhook_endpoints WHERE id = ?`).bind(row.id).run();
      }),
      fuzzParameters(RUNS),
    );
  });
});
