/**
 * A TCP proxy between the engine and the Worker's callback routes (the
 * engine's CALLBACK_BASE points here) that can hold one clip's upload of one
 * job: the request is not forwarded, so the engine's attempt hangs (until it
 * gives up and retries into the same hold, or the test releases it), and the
 * job stays mid-processing (credits reserved, clips rendered, nothing
 * published) for as long as a test needs it. A test then acts on an event,
 * "this clip is rendered and being handed over", instead of polling for a step
 * and hoping the job is still there. A released upload goes on where it
 * stopped, so the job then completes as if nothing had happened.
 *
 * Everything else passes through untouched, progress reports included, so the
 * watchdog sees a healthy job. The engine writes a request's line and headers
 * in one write, so a held request is recognised by its first chunk; bytes
 * before it on a kept-alive connection belong to an earlier, finished request
 * and are forwarded.
 */
import { CALLBACK_PREFIX } from "#contract";
import { freePort } from "../../../scripts/local-stack/ports.ts";
import type { StackOptions } from "../../../scripts/local-stack/stack.ts";
import { startTcpProxy } from "./tcp-proxy.ts";

export interface UploadGate {
  /** The engine's CALLBACK_BASE. */
  url: string;
  /** From now on every upload of clip `clip`'s video of `jobId` is held (retries too). */
  hold(jobId: string, clip: number): void;
  /** Resolves once an upload held by hold(jobId, clip) has arrived. */
  held(jobId: string, clip: number): Promise<void>;
  /** Ends hold(jobId, clip): held uploads go on to the Worker, and later ones pass. */
  release(jobId: string, clip: number): void;
  close(): Promise<void>;
}

interface Hold {
  reached: Promise<void>;
  reach: () => void;
  /** Sends each held upload on (the ones whose engine attempt gave up are gone already). */
  resumes: (() => void)[];
}

const UPLOAD_LINE = new RegExp(`PUT ${CALLBACK_PREFIX.replace(/\//g, "\\/")}\\/([^/\\s]+)\\/clips\\/(\\d+) HTTP\\/1\\.1\\r\\n`);

export async function startUploadGate(workerUrl: string): Promise<UploadGate> {
  const holds = new Map<string, Hold>();
  const holdFor = (jobId: string, clip: number): Hold => {
    const key = `${jobId}/${clip}`;
    let hold = holds.get(key);
    if (!hold) {
      let reach: () => void = () => undefined;
      const reached = new Promise<void>((resolve) => (reach = resolve));
      hold = { reached, reach, resumes: [] };
      holds.set(key, hold);
    }
    return hold;
  };
  const armed = new Set<string>();
  const proxy = await startTcpProxy(workerUrl, (chunk, { forward, pause }) => {
    const match = armed.size > 0 ? UPLOAD_LINE.exec(chunk.toString("latin1")) : null;
    if (match && armed.has(`${match[1]}/${match[2]}`)) {
      forward(chunk.subarray(0, match.index));
      const resume = pause();
      const hold = holdFor(match[1]!, Number(match[2]));
      const rest = chunk.subarray(match.index);
      hold.resumes.push(() => (forward(rest), resume()));
      hold.reach();
      return;
    }
    forward(chunk);
  });
  return {
    url: proxy.url,
    hold: (jobId, clip) => {
      armed.add(`${jobId}/${clip}`);
      holdFor(jobId, clip);
    },
    held: (jobId, clip) => holdFor(jobId, clip).reached,
    release: (jobId, clip) => {
      armed.delete(`${jobId}/${clip}`);
      for (const resume of holdFor(jobId, clip).resumes.splice(0)) resume();
    },
    close: proxy.close,
  };
}

/**
 * A gate in front of the stack these options will start: the Worker gets a
 * fixed port for the gate to forward to, and the engine's CALLBACK_BASE
 * becomes the gate (the options are changed in place).
 */
export async function gateStack(options: StackOptions): Promise<UploadGate> {
  options.workerPort ??= await freePort();
  const gate = await startUploadGate(`http://127.0.0.1:${options.workerPort}`);
  options.engineEnv = { ...options.engineEnv, CALLBACK_BASE: gate.url };
  return gate;
}
