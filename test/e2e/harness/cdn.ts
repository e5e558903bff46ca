/** Downloads from {cdn_url}, as a browser or a client script would. */
import { mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Downloaded {
  status: number;
  contentType: string;
  bytes: Uint8Array;
  headers: Headers;
}

export async function download(url: string, headers: Record<string, string> = {}): Promise<Downloaded> {
  const response = await fetch(url, { headers });
  return {
    status: response.status,
    contentType: response.headers.get("Content-Type") ?? "",
    bytes: new Uint8Array(await response.arrayBuffer()),
    headers: response.headers,
  };
}

/** Status of a GET, body discarded: for "is it gone from the CDN" checks. */
export async function statusOf(url: string): Promise<number> {
  const response = await fetch(url);
  await response.body?.cancel();
  return response.status;
}

/** A scratch directory for downloaded files, removed by the returned function. */
export function scratchDir(): { dir: string; save: (name: string, bytes: Uint8Array) => Promise<string>; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "clipjobs-e2e-"));
  return {
    dir,
    save: async (name, bytes) => {
      const path = join(dir, name);
      await writeFile(path, bytes);
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
