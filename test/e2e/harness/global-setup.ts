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
import type { UploadGate } from "./upload-gate.ts";

declare module "vitest" {
  export interface ProvidedContext {
    e2eControlUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let starting: Promise<{ stack: LocalStack; info: SharedStackInfo; gate: UploadGate }> | undefined;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://control");
    const fail = (error: unknown) =>
      res.writeHead(500, { "Content-Type": "text/plain" }).end(error instanceof Error ? error.message : String(error));
    if (req.method === "POST" && url.pathname === "/stack") {
      starting ??= startSharedStack();
      starting.then(({ info }) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(info)), fail);
      return;
    }
    // The upload gate (upload-gate.ts): /gate/hold arms a hold and answers at once; /gate/held answers once it holds;
    // /gate/release lets the held upload go on.
    const job = url.searchParams.get("job");
    const clip = Number(url.searchParams.get("clip"));
    const action = /^\/gate\/(hold|held|release)$/.exec(url.pathname)?.[1];
    if (req.method === "POST" && action && starting && job && Number.isInteger(clip)) {
      starting
        .then(async ({ gate }) => {
          if (action === "hold") gate.hold(job, clip);
          else if (action === "release") gate.release(job, clip);
          else await gate.held(job, clip);
          res.writeHead(204).end();
        })
        .catch(fail);
      return;
    }
    res.writeHead(404).end();
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
      await started?.gate.close();
    }
  };
}
