/**
 * Builds the engine image from container/Dockerfile with container/ as the
 * context, as `wrangler deploy` does (wrangler.toml [[containers]] image;
 * wrangler builds for linux/amd64), with podman directly. Two stand-ins,
 * each said in the output and each only where the real thing is out of
 * reach: yt-dlp from Debian (build argument YTDLP_SOURCE=debian) when PyPI
 * cannot be reached, and, when this machine's TLS is intercepted (its CA
 * bundle is named by NODE_EXTRA_CA_CERTS), that bundle mounted for npm during
 * the build only; neither ends up in the image.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { podman, podmanRun, RUNTIME_FLAGS } from "./podman.ts";

export const ENGINE_IMAGE = "localhost/clipjobs-engine:image-test";

export interface BuiltImage {
  reference: string;
  buildMs: number;
  ytdlpSource: "pypi" | "debian";
}

async function reachable(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(8_000) });
    return response.status < 500;
  } catch {
    return false;
  }
}

export async function buildEngineImage(root: string, workDir: string, say: (line: string) => void): Promise<BuiltImage> {
  execFileSync("npm", ["run", "--silent", "build:engine"], { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
  const args = ["build", ...RUNTIME_FLAGS, "--network", "host", "--platform", "linux/amd64", "--format", "docker"];
  const ytdlpSource = (await reachable("https://pypi.org/simple/yt-dlp/")) ? "pypi" : "debian";
  if (ytdlpSource === "debian") {
    say("yt-dlp: PyPI cannot be reached; building with YTDLP_SOURCE=debian (Debian's yt-dlp, a stand-in production never uses)");
    args.push("--build-arg", "YTDLP_SOURCE=debian");
  }
  const extraCa = process.env.NODE_EXTRA_CA_CERTS;
  if (extraCa && existsSync(extraCa)) {
    say(`npm in the build trusts this machine's CA bundle (${extraCa}), mounted for the build only`);
    mkdirSync(workDir, { recursive: true });
    const npmrc = join(workDir, "npmrc");
    writeFileSync(npmrc, "cafile=/tmp/host-ca.crt\n");
    // npm's global config file (prefix /usr/local in the node image).
    args.push("--volume", `${extraCa}:/tmp/host-ca.crt:ro`, "--volume", `${npmrc}:/usr/local/etc/npmrc:ro`);
  }
  args.push("--tag", ENGINE_IMAGE, "--file", join(root, "container/Dockerfile"), join(root, "container"));
  // The tag's previous image, removed once the new one replaces it, so runs do not pile up images.
  const previous = await podmanRun(["image", "inspect", "--format", "{{.Id}}", ENGINE_IMAGE]);
  const started = Date.now();
  await podman(args, { echo: (line) => (/^STEP \d+\/\d+/.test(line) ? say(`build: ${line.slice(0, 140)}`) : undefined) });
  const buildMs = Date.now() - started;
  const current = (await podman(["image", "inspect", "--format", "{{.Id}}", ENGINE_IMAGE])).trim();
  if (previous.code === 0 && previous.stdout.trim() !== current) await podmanRun(["rmi", previous.stdout.trim()]);
  return { reference: ENGINE_IMAGE, buildMs, ytdlpSource };
}
