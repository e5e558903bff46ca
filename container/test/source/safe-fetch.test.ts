import { readFile, stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicOnlyPolicy, systemResolver, type AddressPolicy, type Resolver } from "../../src/source/address-policy.ts";
import { safeDownload, type SafeDownloadRequest } from "../../src/source/safe-fetch.ts";
import { osTempDir, removeTempDirs } from "../helpers/media.ts";
import { failureOf } from "../helpers/failure.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

/**
 * SSRF and resource-limit rules of the direct download path, against real
 * local servers. The loopback "victim" listens on every address (IPv4 and
 * IPv6) and counts connections: a refused download must leave it untouched.
 */
let victim: RecordingServer;
let dir: string;

beforeAll(async () => {
  victim = await startRecordingServer((_req, res) => res.end("secret"), "::");
  dir = await osTempDir("safe-fetch");
});
afterAll(async () => {
  await victim.close();
});

let counter = 0;
function request(url: string, overrides: Partial<SafeDownloadRequest> = {}): SafeDownloadRequest {
  counter += 1;
  return {
    url,
    destPath: path.join(dir, `download-${counter}`),
    maxBytes: 1024 * 1024,
    tooLargeMessage: "too large",
    timeoutMs: 10_000,
    stallTimeoutMs: 5_000,
    maxRedirects: 5,
    policy: publicOnlyPolicy,
    resolver: systemResolver,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Allows only the given ports on loopback: lets one test server through and nothing else. */
function onlyPorts(...ports: number[]): AddressPolicy {
  return (target) => (ports.includes(target.port) ? null : publicOnlyPolicy(target));
}

describe("address rules (allow_private_hosts false)", () => {
  it.each([
    (p: number) => `http://127.0.0.1:${p}/v.mp4`,
    (p: number) => `http://127.1:${p}/v.mp4`,
    (p: number) => `http://2130706433:${p}/v.mp4`,
    (p: number) => `http://0x7f.1:${p}/v.mp4`,
    (p: number) => `http://0177.0.0.1:${p}/v.mp4`,
    (p: number) => `http://[::1]:${p}/v.mp4`,
    (p: number) => `http://[::ffff:127.0.0.1]:${p}/v.mp4`,
    (p: number) => `http://0.0.0.0:${p}/v.mp4`,
  ])("refuses %s without connecting", async (makeUrl) => {
    const before = victim.connections;
    const failure = await failureOf(safeDownload(request(makeUrl(victim.port))));
    expect(failure.code).toBe("source_unreachable");
    expect(failure.message).toMatch(/private, loopback or otherwise non-public address/);
    expect(victim.connections).toBe(before);
  });

  it("refuses the cloud metadata address", async () => {
    const failure = await failureOf(safeDownload(request("http://169.254.169.254/latest/meta-data/")));
    expect(failure.code).toBe("source_unreachable");
    expect(failure.message).toMatch(/link-local or metadata/);
  });

  it("refuses a public-looking name that resolves to loopback, and a name with one private answer among public ones", async () => {
    const before = victim.connections;
    const toLoopback: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];
    const mixed: Resolver = async () => [
      { address: "93.184.215.14", family: 4 },
      { address: "::1", family: 6 },
    ];
    for (const resolver of [toLoopback, mixed]) {
      const failure = await failureOf(safeDownload(request(`http://videos.example.com:${victim.port}/v.mp4`, { resolver })));
      expect(failure.code).toBe("source_unreachable");
      expect(failure.message).toMatch(/videos\.example\.com resolves to a loopback address/);
    }
    expect(victim.connections).toBe(before);
  });

  it("connects to the address it checked, whatever a second DNS answer would say", async () => {
    // The resolver is asked once; the connection must go to that answer even though
    // the URL's name (.invalid) cannot resolve through the system.
    let asked = 0;
    const resolver: Resolver = async () => {
      asked += 1;
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const ok = await startRecordingServer((_req, res) => res.writeHead(200, { "content-type": "video/mp4" }).end("0123456789"));
    try {
      const result = await safeDownload(request(`http://pinned.invalid:${ok.port}/v.mp4`, { resolver, policy: onlyPorts(ok.port) }));
      expect(result.bytes).toBe(10);
      expect(asked).toBe(1);
      expect(ok.requests).toEqual(["GET /v.mp4"]);
    } finally {
      await ok.close();
    }
  });

  it("re-checks every redirect hop: a redirect to loopback is refused before connecting", async () => {
    const redirector = await startRecordingServer((req, res) => {
      const target = req.url === "/to-v6" ? `http://[::1]:${victim.port}/x` : `http://127.0.0.1:${victim.port}/x`;
      res.writeHead(302, { location: target }).end();
    });
    try {
      const before = victim.connections;
      for (const route of ["/to-v4", "/to-v6"]) {
        const failure = await failureOf(safeDownload(request(redirector.url(route), { policy: onlyPorts(redirector.port) })));
        expect(failure.code).toBe("source_unreachable");
        expect(failure.message).toMatch(/non-public address/);
      }
      expect(redirector.requests).toEqual(["GET /to-v4", "GET /to-v6"]);
      expect(victim.connections).toBe(before);
      // Control: with the victim's port allowed too, the same redirect is followed.
      const followed = await safeDownload(request(redirector.url("/to-v4"), { policy: onlyPorts(redirector.port, victim.port) }));
      expect(followed.bytes).toBe("secret".length);
    } finally {
      await redirector.close();
    }
  });

  it("stops after too many redirects", async () => {
    const loop = await startRecordingServer((req, res) => res.writeHead(301, { location: `/hop${req.url?.length ?? 0}` }).end());
    try {
      const failure = await failureOf(safeDownload(request(loop.url("/"), { policy: onlyPorts(loop.port), maxRedirects: 3 })));
      expect(failure.code).toBe("source_unreachable");
      expect(failure.message).toMatch(/redirected more than 3 times/);
      expect(loop.requests).toHaveLength(4);
    } finally {
      await loop.close();
    }
  });

  it.each(["ftp://example.com/v.mp4", "file:///etc/passwd", "http://user:pass@example.com/v.mp4", "not a url"])(
    "refuses %s by its form",
    async (url) => {
      const failure = await failureOf(safeDownload(request(url)));
      expect(failure.code).toBe("source_unreachable");
    },
  );
});

describe("size and time limits", () => {
  let source: RecordingServer;
  let stalled: (() => void)[] = [];
  beforeAll(async () => {
    source = await startRecordingServer((req, res) => {
      const chunk = Buffer.alloc(64 * 1024, 7);
      if (req.url === "/declared-huge") {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": String(10 * 1024 * 1024 * 1024) });
        res.write(chunk);
        return;
      }
      if (req.url === "/endless") {
        res.writeHead(200, { "content-type": "video/mp4" });
        const pump = () => {
          while (res.write(chunk)) {
            /* keep the socket buffer full */
          }
        };
        res.on("drain", pump);
        res.on("close", () => res.off("drain", pump));
        pump();
        return;
      }
      if (req.url === "/stall") {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": "1000000" });
        res.write(chunk.subarray(0, 1000));
        stalled.push(() => res.destroy());
        return;
      }
      if (req.url === "/trickle") {
        res.writeHead(200, { "content-type": "video/mp4" });
        const timer = setInterval(() => res.write("x"), 50);
        res.on("close", () => clearInterval(timer));
        return;
      }
      if (req.url === "/page") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html><body>hello</body></html>");
        return;
      }
      if (req.url === "/missing") {
        res.writeHead(404).end();
        return;
      }
      if (req.url === "/short") {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": "5000" });
        res.end(chunk.subarray(0, 100));
        return;
      }
      res.writeHead(500).end();
    });
  });
  afterAll(async () => {
    for (const end of stalled) end();
    stalled = [];
    await source.close();
  });
  const allowSource = () => onlyPorts(source.port);

  it("refuses a Content-Length over the cap before reading the body", async () => {
    const req = request(source.url("/declared-huge"), { policy: allowSource() });
    const failure = await failureOf(safeDownload(req));
    expect(failure.code).toBe("source_too_large");
    await expect(stat(req.destPath)).rejects.toThrow();
  });

  it("stops an endless body without Content-Length at the cap", async () => {
    const req = request(source.url("/endless"), { policy: allowSource(), maxBytes: 512 * 1024 });
    const failure = await failureOf(safeDownload(req));
    expect(failure.code).toBe("source_too_large");
    const written = (await stat(req.destPath)).size;
    expect(written).toBeLessThanOrEqual(512 * 1024);
  });

  it("abandons a body that stops arriving", async () => {
    const failure = await failureOf(safeDownload(request(source.url("/stall"), { policy: allowSource(), stallTimeoutMs: 300 })));
    expect(failure.code).toBe("source_unreachable");
    expect(failure.message).toMatch(/stopped sending data/);
  });

  it("abandons a slow body at the total time limit", async () => {
    const failure = await failureOf(
      safeDownload(request(source.url("/trickle"), { policy: allowSource(), stallTimeoutMs: 5_000, timeoutMs: 700 })),
    );
    expect(failure.code).toBe("source_unreachable");
    expect(failure.message).toMatch(/took longer than/);
  });

  it("says a web page is not a video", async () => {
    const failure = await failureOf(safeDownload(request(source.url("/page"), { policy: allowSource() })));
    expect(failure.code).toBe("source_not_video");
  });

  it("maps HTTP errors, refused connections and truncated bodies to source_unreachable", async () => {
    const notFound = await failureOf(safeDownload(request(source.url("/missing"), { policy: allowSource() })));
    expect(notFound.message).toMatch(/HTTP 404/);
    const closed = await startRecordingServer(() => undefined);
    const port = closed.port;
    await closed.close();
    const refused = await failureOf(safeDownload(request(`http://127.0.0.1:${port}/v.mp4`, { policy: onlyPorts(port) })));
    expect(refused.code).toBe("source_unreachable");
    expect(refused.message).toMatch(/refused the connection/);
    const short = await failureOf(safeDownload(request(source.url("/short"), { policy: allowSource() })));
    expect(short.code).toBe("source_unreachable");
  });

  it("streams a good body to disk and reports byte progress", async () => {
    const body = Buffer.from("a".repeat(200_000));
    const good = await startRecordingServer((_req, res) => res.writeHead(200, { "content-type": "video/mp4", "content-length": String(body.length) }).end(body));
    try {
      const seen: number[] = [];
      const req = request(good.url("/v.mp4"), { policy: onlyPorts(good.port), onProgress: (bytes) => seen.push(bytes) });
      const result = await safeDownload(req);
      expect(result.bytes).toBe(body.length);
      expect((await readFile(req.destPath)).equals(body)).toBe(true);
      expect(seen.at(-1)).toBe(body.length);
    } finally {
      await good.close();
    }
  });

  it("stops at once when the job is aborted", async () => {
    const controller = new AbortController();
    const pending = safeDownload(request(source.url("/trickle"), { policy: allowSource(), signal: controller.signal }));
    controller.abort(new Error("canceled by test"));
    await expect(pending).rejects.toThrow("canceled by test");
  });
});

describe("sockets of a hostile host", () => {
  it("closes redirect and error responses whose bodies never end", async () => {
    // Redirects and errors with endless bodies: a download that only drained them
    // would keep every hop's socket open for as long as the host keeps sending.
    let open = 0;
    const chunk = Buffer.alloc(16 * 1024, 1);
    const endless = (res: http.ServerResponse) => {
      const pump = () => {
        while (res.write(chunk)) {
          /* keep the socket buffer full */
        }
      };
      res.on("drain", pump);
      pump();
    };
    const server = http.createServer((req, res) => {
      if (req.url === "/hop1") res.writeHead(302, { location: "/hop2" });
      else if (req.url === "/hop2") res.writeHead(307, { location: "/error" });
      else res.writeHead(503, { "content-type": "text/plain" });
      endless(res);
    });
    server.on("connection", (socket) => {
      open += 1;
      socket.on("close", () => {
        open -= 1;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const failure = await failureOf(safeDownload(request(`http://127.0.0.1:${port}/hop1`, { policy: onlyPorts(port) })));
      expect(failure.message).toMatch(/HTTP 503/);
      await waitFor(() => open === 0, 3_000, "every socket of the download closed");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

afterAll(removeTempDirs);
