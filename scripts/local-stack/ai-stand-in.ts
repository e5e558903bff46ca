/**
 * The Workers AI REST stand-in (test/stand-ins/workers-ai-rest.ts) served
 * over HTTP on loopback, for e2e tests and for a newcomer without an account:
 *
 *   npm run stand-in:ai -- [--port 8790] [--token T] [--account A] [--script "words whisper hears"]
 *
 * then start the stack against it:
 *
 *   WORKERS_AI_BASE_URL=http://127.0.0.1:8790/client/v4 CLOUDFLARE_ACCOUNT_ID=A CLOUDFLARE_API_TOKEN=T npm run dev
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { pathToFileURL } from "node:url";
import { WorkersAiRestStandIn, type StandInOptions } from "../../test/stand-ins/workers-ai-rest.ts";

export interface RunningAiStandIn {
  /** The value for WORKERS_AI_BASE_URL. */
  baseUrl: string;
  standIn: WorkersAiRestStandIn;
  close(): Promise<void>;
}

async function toRequest(incoming: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  return new Request(new URL(incoming.url ?? "/", origin), { method: incoming.method, headers, body: incoming.method === "GET" ? undefined : body });
}

async function reply(response: Response, outgoing: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  outgoing.writeHead(response.status, headers);
  outgoing.end(Buffer.from(await response.arrayBuffer()));
}

export async function startAiStandIn(options: StandInOptions & { port?: number }): Promise<RunningAiStandIn> {
  const standIn = new WorkersAiRestStandIn(options);
  const server = createServer((incoming, outgoing) => {
    const aborted = new AbortController();
    outgoing.on("close", () => aborted.abort());
    void toRequest(incoming, "http://127.0.0.1")
      .then((request) => standIn.fetch(request, { signal: aborted.signal }))
      .then((response) => reply(response, outgoing))
      .catch(() => {
        if (!outgoing.headersSent) outgoing.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}/client/v4`,
    standIn,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function flag(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const accountId = flag(args, "--account") ?? "local-account";
  const token = flag(args, "--token") ?? "local-token";
  const running = await startAiStandIn({
    port: Number(flag(args, "--port") ?? 8790),
    accountId,
    token,
    script: flag(args, "--script") ?? "this is the Workers AI stand-in speaking",
  });
  console.log(`Workers AI REST stand-in on ${running.baseUrl} (account ${accountId}, token ${token}). Start a stack against it with:`);
  console.log(`  WORKERS_AI_BASE_URL=${running.baseUrl} CLOUDFLARE_ACCOUNT_ID=${accountId} CLOUDFLARE_API_TOKEN=${token} npm run dev`);
  running.standIn.onRequest = (r) => console.log(`${r.status} ${r.model}`);
}
