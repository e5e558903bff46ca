/**
 * npm run openapi:snapshot: serves the Worker under `wrangler dev`, saves the
 * OpenAPI document it serves to client/openapi.json and regenerates the
 * client's types (client/src/schema.ts) from it. Run it after changing a
 * public route; test/worker/openapi-snapshot.test.ts fails until you do.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DOCUMENT_PATH, generateSchemaTypes, SCHEMA_TYPES_PATH } from "../client/codegen/generate-types.ts";
import { startLocalStack } from "./local-stack/stack.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "clipjobs-openapi-"));
  // The Worker alone, on a free port, with throwaway storage.
  const stack = await startLocalStack({ root, dir: join(dir, "stack"), engine: false, fresh: true, ephemeral: true });
  try {
    const response = await fetch(`${stack.workerUrl}/api/v1/openapi.json`);
    if (!response.ok) throw new Error(`GET /api/v1/openapi.json answered ${response.status}`);
    const document = `${JSON.stringify(await response.json(), null, 2)}\n`;
    await writeFile(DOCUMENT_PATH, document);
    await writeFile(SCHEMA_TYPES_PATH, await generateSchemaTypes(document));
    console.log(`wrote ${DOCUMENT_PATH}\nwrote ${SCHEMA_TYPES_PATH}`);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
