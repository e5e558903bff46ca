import { createWriteStream } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { CALLBACK_PREFIX, type ProbeAck } from "../../../src/engine/contract.ts";

/**
 * A real HTTP server standing in for the Worker's internal callback routes:
 * it checks the bearer token, records every call in order and stores uploads
 * on disk so tests can probe them with ffprobe.
 */
export interface RecordedCall {
  jobId: string;
  /** progress, probe, complete, fail, interrupted, clip, thumbnail */
  kind: string;
  index?: number;
  body?: unknown;
  bytes?: number;
  file?: string;
  contentType?: string;
  at: number;
}

export interface FakeWorkerBehaviour {
  probeAck?: (jobId: string) => ProbeAck;
  /** Return a status to answer instead of 200 (e.g. 409, 503); undefined answers normally. */
  override?: (call: { jobId: string; kind: string; count: number }) => number | undefined;
}

export interface FakeWorker {
  base: string;
  calls: RecordedCall[];
  callsFor(jobId: string, kind?: string): RecordedCall[];
  behaviour: FakeWorkerBehaviour;
  unauthorized: number;
  close(): Promise<void>;
}

export async function startFakeWorker(tokens: Map<string, string>, uploadDir: string): Promise<FakeWorker> {
  const calls: RecordedCall[] = [];
  const counts = new Map<string, number>();
  const state = { unauthorized: 0 };
  const behaviour: FakeWorkerBehaviour = {};
  const route = new RegExp(`^${CALLBACK_PREFIX}/([^/]+)/(progress|probe|complete|fail|interrupted|clips/(\\d+)(/thumbnail)?)$`);

  const server = http.createServer((req, res) => {
    void (async () => {
      const match = route.exec(req.url ?? "");
      if (!match?.[1] || !match[2]) {
        res.writeHead(404).end();
        return;
      }
      const jobId = match[1];
      if (req.headers.authorization !== `Bearer ${tokens.get(jobId) ?? "-"}`) {
        state.unauthorized += 1;
        req.resume();
        res.writeHead(401).end();
        return;
      }
      const kind = match[3] !== undefined ? (match[4] ? "thumbnail" : "clip") : match[2];
      const key = `${jobId}:${kind}`;
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      const status = behaviour.override?.({ jobId, kind, count });
      if (status !== undefined) {
        req.resume();
        const body = status === 409 ? JSON.stringify({ code: "job_not_active", status: 409 }) : "{}";
        res.writeHead(status, { "content-type": status === 409 ? "application/problem+json" : "application/json" }).end(body);
        return;
      }
      const call: RecordedCall = { jobId, kind, at: Date.now(), contentType: req.headers["content-type"] };
      if (kind === "clip" || kind === "thumbnail") {
        const index = Number(match[3]);
        const file = path.join(uploadDir, `${jobId}-${index}.${kind === "clip" ? "mp4" : "jpg"}`);
        await pipeline(req, createWriteStream(file));
        Object.assign(call, { index, file, bytes: Number(req.headers["content-length"]) });
      } else {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        call.body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      }
      calls.push(call);
      const answer = kind === "probe" ? (behaviour.probeAck?.(jobId) ?? { proceed: true, credits_reserved: 1 }) : { ok: true };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    calls,
    callsFor: (jobId, kind) => calls.filter((c) => c.jobId === jobId && (kind === undefined || c.kind === kind)),
    behaviour,
    get unauthorized() {
      return state.unauthorized;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
