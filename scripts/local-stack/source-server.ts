/**
 * A tiny loopback HTTP server that plays the part of "somewhere on the web"
 * for sources: it serves registered files (with Range support, as a real file
 * host would) and fixed text bodies (an HTML page posing as a video link).
 */
import { createReadStream, statSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname } from "node:path";

/**
 * Bytes read from disk at a time. This server stands in for the internet on
 * the engine's own cores (tests, the demo, bench:engine), so its CPU is kept
 * small: the default 64 KiB reads cost 0.5-0.7 s of CPU to serve the bench's
 * 305 MB source, 1 MiB reads 0.25-0.3 s.
 */
const READ_BYTES = 1024 * 1024;

interface FileEntry {
  kind: "file";
  path: string;
  contentType: string;
}
interface TextEntry {
  kind: "text";
  body: string;
  contentType: string;
}
/** A file whose first download stops after `holdAfter` bytes until released (later downloads are served whole). */
interface HeldEntry {
  kind: "held";
  path: string;
  contentType: string;
  holdAfter: number;
  held: boolean;
  onReached: () => void;
  released: Promise<void>;
}
type Entry = FileEntry | TextEntry | HeldEntry;

/** A held file: `reached` resolves once a client has received the first bytes and is waiting for the rest. */
export interface HeldFile {
  url: string;
  reached: Promise<void>;
  /** Sends the rest of the held download (if its client is still there) and serves every later one whole. */
  release(): void;
}

export interface SourceServer {
  readonly origin: string;
  /** Serves `path` at the returned URL (the name keeps the file's extension). */
  addFile(name: string, path: string, contentType?: string): string;
  addText(name: string, body: string, contentType: string): string;
  /**
   * Serves `path` like addFile, except that the first download sends
   * `holdAfter` bytes and then waits for release(): a test can act while a
   * download is known to be under way (an event, not a guess at timing).
   */
  addHeldFile(name: string, path: string, holdAfter: number, contentType?: string): HeldFile;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  ".mp4": "video/mp4",
  ".mov": "video/quicktime",
  ".mkv": "video/x-matroska",
  ".webm": "video/webm",
};

function parseRange(header: string | undefined, size: number): { start: number; end: number } | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header) : null;
  if (!match) return null;
  const [, from = "", to = ""] = match;
  if (from === "" && to === "") return null;
  const start = from === "" ? Math.max(0, size - Number(to)) : Number(from);
  const end = from === "" || to === "" ? size - 1 : Math.min(size - 1, Number(to));
  return start <= end ? { start, end } : null;
}

/** The first download of a held file: `holdAfter` bytes, then nothing until released, then the rest. */
function serveHeld(req: IncomingMessage, res: ServerResponse, entry: HeldEntry): void {
  entry.held = false;
  const size = statSync(entry.path).size;
  const cut = Math.min(entry.holdAfter, size);
  res.writeHead(200, { "Content-Type": entry.contentType, "Content-Length": size, "Accept-Ranges": "none" });
  if (req.method === "HEAD") return void res.end();
  createReadStream(entry.path, { start: 0, end: cut - 1, highWaterMark: READ_BYTES })
    .on("end", () => {
      entry.onReached();
      void entry.released.then(() => {
        if (!res.destroyed) createReadStream(entry.path, { start: cut, highWaterMark: READ_BYTES }).pipe(res);
      });
    })
    .pipe(res, { end: false });
}

function serveFile(req: IncomingMessage, res: ServerResponse, entry: FileEntry): void {
  const size = statSync(entry.path).size;
  const range = parseRange(req.headers.range, size);
  res.setHeader("Content-Type", entry.contentType);
  res.setHeader("Accept-Ranges", "bytes");
  if (range) {
    res.writeHead(206, { "Content-Range": `bytes ${range.start}-${range.end}/${size}`, "Content-Length": range.end - range.start + 1 });
    if (req.method === "HEAD") return void res.end();
    createReadStream(entry.path, { ...range, highWaterMark: READ_BYTES }).pipe(res);
    return;
  }
  res.writeHead(200, { "Content-Length": size });
  if (req.method === "HEAD") return void res.end();
  createReadStream(entry.path, { highWaterMark: READ_BYTES }).pipe(res);
}

export async function startSourceServer(): Promise<SourceServer> {
  const entries = new Map<string, Entry>();
  const server = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? "/", "http://source").pathname.replace(/^\/+/, ""));
    const entry = entries.get(name);
    if ((req.method !== "GET" && req.method !== "HEAD") || !entry) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
      return;
    }
    if (entry.kind === "text") {
      res.writeHead(200, { "Content-Type": entry.contentType, "Content-Length": Buffer.byteLength(entry.body) });
      res.end(req.method === "HEAD" ? undefined : entry.body);
      return;
    }
    if (entry.kind === "held") {
      if (entry.held && req.method === "GET") return serveHeld(req, res, entry);
      if (entry.held) {
        res.writeHead(200, { "Content-Type": entry.contentType, "Content-Length": statSync(entry.path).size }).end();
        return;
      }
      // Released: served like any file, so the tail can be fetched with a range too.
      return serveFile(req, res, { kind: "file", path: entry.path, contentType: entry.contentType });
    }
    serveFile(req, res, entry);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const urlOf = (name: string): string => `${origin}/${encodeURIComponent(name)}`;

  return {
    origin,
    addFile(name, path, contentType) {
      entries.set(name, { kind: "file", path, contentType: contentType ?? TYPES[extname(name).toLowerCase()] ?? "application/octet-stream" });
      return urlOf(name);
    },
    addText(name, body, contentType) {
      entries.set(name, { kind: "text", body, contentType });
      return urlOf(name);
    },
    addHeldFile(name, path, holdAfter, contentType) {
      let onReached!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((resolve) => (onReached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      const type = contentType ?? TYPES[extname(name).toLowerCase()] ?? "application/octet-stream";
      const entry: HeldEntry = { kind: "held", path, contentType: type, holdAfter, held: true, onReached, released };
      entries.set(name, entry);
      return {
        url: urlOf(name),
        reached,
        release: () => {
          entry.held = false;
          release();
        },
      };
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
