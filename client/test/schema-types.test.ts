/** The committed client types are exactly what openapi-typescript makes of the saved document. */
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { generateSchemaTypes, readSavedDocument, SCHEMA_TYPES_PATH } from "../codegen/generate-types.ts";

it("client/src/schema.ts is regenerated unchanged from client/openapi.json (else run: npm run openapi:snapshot)", async () => {
  const regenerated = await generateSchemaTypes(await readSavedDocument());
  const committed = await readFile(SCHEMA_TYPES_PATH, "utf8");
  expect(regenerated === committed, "client/src/schema.ts is stale: npm run openapi:snapshot").toBe(true);
});
