/**
 * client/openapi.json is the document the Worker serves: the typed client's
 * types and the Redocly lint (client/test/) are built from that file, so it
 * must not drift. After changing a public route: npm run openapi:snapshot.
 */
import { SELF } from "cloudflare:test";
import { expect, it } from "vitest";
import saved from "../../client/openapi.json";
import { BASE } from "./helpers.ts";

it("client/openapi.json equals the served document (else run: npm run openapi:snapshot)", async () => {
  const res = await SELF.fetch(`${BASE}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual(saved);
});
