/**
 * The demo's last stage: every clip and thumbnail downloads from {cdn_url}
 * and is what it claims to be. The files are kept under .tmp/demo/clips/, so
 * they can still be watched after the local stack has stopped.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ClipView } from "../local-stack/api-client.ts";

async function download(url: string, expectedType: string): Promise<Uint8Array> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
  const type = response.headers.get("Content-Type") ?? "";
  if (!type.startsWith(expectedType)) throw new Error(`GET ${url} is ${type || "untyped"}, expected ${expectedType}`);
  return new Uint8Array(await response.arrayBuffer());
}

function isMp4(bytes: Uint8Array): boolean {
  return new TextDecoder().decode(bytes.subarray(4, 8)) === "ftyp";
}

function isJpeg(bytes: Uint8Array): boolean {
  return bytes[0] === 0xff && bytes[1] === 0xd8;
}

/** Downloads everything into `saveDir`, tries one Range request, and returns a one-line summary. */
export async function checkDownloads(clips: ClipView[], saveDir: string): Promise<string> {
  if (clips.length === 0) throw new Error("the job completed without clips");
  await mkdir(saveDir, { recursive: true });
  let bytes = 0;
  for (const [index, clip] of clips.entries()) {
    const video = await download(clip.url, "video/mp4");
    if (!isMp4(video)) throw new Error(`${clip.url} is not an MP4 file`);
    const thumbnail = await download(clip.thumbnail_url, "image/jpeg");
    if (!isJpeg(thumbnail)) throw new Error(`${clip.thumbnail_url} is not a JPEG`);
    await writeFile(join(saveDir, `clip-${index + 1}.mp4`), video);
    await writeFile(join(saveDir, `clip-${index + 1}.jpg`), thumbnail);
    bytes += video.byteLength + thumbnail.byteLength;
  }
  const first = clips[0]?.url ?? "";
  const ranged = await fetch(first, { headers: { Range: "bytes=0-1023" } });
  await ranged.body?.cancel();
  if (ranged.status !== 206) throw new Error(`a Range request on ${first} answered ${ranged.status}, expected 206`);
  return `Downloaded ${clips.length} clip${clips.length === 1 ? "" : "s"} and thumbnail${clips.length === 1 ? "" : "s"} (${(bytes / 1e6).toFixed(1)} MB) into ${saveDir}; a Range request answered 206.`;
}
