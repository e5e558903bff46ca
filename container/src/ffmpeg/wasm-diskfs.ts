/**
 * A read-only Emscripten file system whose files are read from disk on demand
 * (worker-thread side). Copying a source into the core's in-memory file
 * system would cost its whole size in memory for the whole run; reading
 * through this keeps the core's memory independent of the source size.
 *
 * The file descriptors are opened (and closed) by the main thread and shared
 * with the worker (descriptors belong to the process), so terminating a
 * worker mid-read never leaks one. Reads land straight in the core's heap.
 */
import { readSync } from "node:fs";

/** Emscripten errno values used by its own file systems. */
const ENOENT = 44;
const EPERM = 63;
const EINVAL = 28;

const DIR_MODE = 0o40555;
const FILE_MODE = 0o100444;

export interface DiskFile {
  /** Base name inside the mount. */
  name: string;
  fd: number;
  size: number;
}

interface FsNode {
  id: number;
  mode: number;
  node_ops: NodeOps;
  stream_ops: StreamOps;
  /** A directory's children by name (how Emscripten's readdir and lookups find them). */
  contents: Record<string, FsNode>;
}

interface FsStream {
  node: FsNode;
  position: number;
}

interface NodeOps {
  getattr(node: FsNode): object;
  setattr(node: FsNode, attr: object): void;
  lookup(parent: FsNode, name: string): FsNode;
  mknod(): never;
  rename(): never;
  unlink(): never;
  rmdir(): never;
  readdir(node: FsNode): string[];
  symlink(): never;
}

interface StreamOps {
  read(stream: FsStream, buffer: Int8Array, offset: number, length: number, position: number): number;
  write(): never;
  llseek(stream: FsStream, offset: number, whence: number): number;
}

/** The part of the core's `FS` object a custom file system needs. */
export interface EmscriptenFs {
  createNode(parent: FsNode | null, name: string, mode: number, rdev: number): FsNode;
  mount(type: { mount(mount: object): FsNode }, opts: object, mountpoint: string): FsNode;
  mkdirTree(path: string): void;
  ErrnoError: new (errno: number) => Error;
}

/** Mounts `files` read-only at `mountpoint` (which must not exist yet as a mount). */
export function mountDiskFiles(FS: EmscriptenFs, mountpoint: string, files: DiskFile[]): void {
  const fileOf = new WeakMap<FsNode, DiskFile>();
  const mountTime = new Date();
  const fail = (errno: number): never => {
    throw new FS.ErrnoError(errno);
  };

  const nodeOps: NodeOps = {
    getattr(node) {
      const size = fileOf.get(node)?.size ?? 4096;
      return {
        dev: 1, ino: node.id, mode: node.mode, nlink: 1, uid: 0, gid: 0, rdev: 0, size,
        atime: mountTime, mtime: mountTime, ctime: mountTime, blksize: 4096, blocks: Math.ceil(size / 4096),
      };
    },
    setattr() {
      // Read-only: ffmpeg never changes an input's attributes; ignoring keeps it harmless.
    },
    lookup: () => fail(ENOENT),
    mknod: () => fail(EPERM),
    rename: () => fail(EPERM),
    unlink: () => fail(EPERM),
    rmdir: () => fail(EPERM),
    readdir: (node) => [".", "..", ...Object.keys(node.contents)],
    symlink: () => fail(EPERM),
  };

  const streamOps: StreamOps = {
    read(stream, buffer, offset, length, position) {
      const file = fileOf.get(stream.node);
      if (!file || position >= file.size) return 0;
      return readSync(file.fd, buffer, offset, Math.min(length, file.size - position), position);
    },
    write: () => fail(EPERM),
    llseek(stream, offset, whence) {
      const SEEK_CUR = 1;
      const SEEK_END = 2;
      let position = offset;
      if (whence === SEEK_CUR) position += stream.position;
      else if (whence === SEEK_END) position += fileOf.get(stream.node)?.size ?? 0;
      if (position < 0) fail(EINVAL);
      return position;
    },
  };

  const createNode = (parent: FsNode | null, name: string, mode: number): FsNode => {
    const node = FS.createNode(parent, name, mode, 0);
    node.node_ops = nodeOps;
    node.stream_ops = streamOps;
    node.contents = {};
    if (parent) parent.contents[name] = node;
    return node;
  };

  FS.mkdirTree(mountpoint);
  FS.mount(
    {
      mount() {
        const root = createNode(null, "/", DIR_MODE);
        for (const file of files) fileOf.set(createNode(root, file.name, FILE_MODE), file);
        return root;
      },
    },
    {},
    mountpoint,
  );
}
