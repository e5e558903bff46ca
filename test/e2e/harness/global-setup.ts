/**
 * vitest globalSetup for the end-to-end suites: one real local stack (the
 * Worker under wrangler dev with fresh storage, the engine with the machine's
 * ffmpeg) shared by every e2e file in the run.
 *
 * The stack starts lazily: this setup only opens a loopback control server,
 * and the first e2e file that asks for the stack starts it. A run of the
 * engine's own tests alone therefore never pays for wrangler. The teardown
 * stops whatever was started.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { startSharedStack, type SharedStackInfo } from "./shared-stack-config.ts";
import type { LocalStack } from "../../../scripts/local-stack/stack.ts";

declare module "vitest" {
  export interface ProvidedContext {
    e2eControlUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let starting: Promise<{ stack: LocalStack; info: SharedStackInfo }> | undefined;
  const server = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/stack") {
      res.writeHead(404).end();
      return;
    }
    starting ??= startSharedStack();
    starting.then(
      ({ info }) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(info)),
      (error: unknown) =>
        res.writeHead(500, { "Content-Type": "text/plain" }).end(error instanceof Error ? error.message : String(error)),
    );
  });
  // The start can take a minute on a busy machine; the default timeouts would cut the answer off.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("e2eControlUrl", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);

  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (starting) {
      const started = await starting.catch(() => undefined);
      await started?.stack.stop();
    }
  };
}
