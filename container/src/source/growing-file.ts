/**
 * A file that is still being written (the source while it downloads, the
 * speech PCM while the analysis pass writes it), read by others as it grows.
 *
 * The writer says when it may have written more (`grew`), when it is done
 * (`finish`) or when it failed (`fail`); readers read what is on disk and wait
 * for the next word when they reach the end. The notes are only hints: a
 * reader always reads the bytes actually on disk, so a note that comes before
 * its bytes are flushed costs nothing but a later read, and `finish` (sent
 * once the writer closed the file) is what makes the end the end.
 */
import { open, stat } from "node:fs/promises";
import { Readable } from "node:stream";

/** Bytes read from disk at once by a stream over the file. */
const READ_CHUNK = 1024 * 1024;

export class GrowingFile {
  #finished = false;
  #error: unknown = undefined;
  #failed = false;
  #wake: (() => void) | null = null;
  #next: Promise<void> | null = null;

  constructor(readonly path: string) {}

  /** A file already complete (nothing will be written to it). */
  static complete(path: string): GrowingFile {
    const file = new GrowingFile(path);
    file.finish();
    return file;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** The writer may have written more. */
  grew(): void {
    this.#notify();
  }

  /** The writer closed the file: what is on disk is all there is. */
  finish(): void {
    this.#finished = true;
    this.#notify();
  }

  /** The writer failed: readers stop with `error`. */
  fail(error: unknown): void {
    if (this.#finished) return;
    this.#failed = true;
    this.#error = error;
    this.#notify();
  }

  /** Throws the writer's failure, if there was one. */
  check(): void {
    if (this.#failed) throw this.#error;
  }

  /**
   * Resolves at the writer's next note (or at once when it already finished
   * or failed). Take it before reading, then await it only if the read came up
   * short: a note between the read and the wait is not missed.
   */
  changed(): Promise<void> {
    if (this.#finished || this.#failed) return Promise.resolve();
    this.#next ??= new Promise<void>((resolve) => (this.#wake = resolve));
    return this.#next;
  }

  /** Bytes on disk now (0 before the file exists). */
  async size(): Promise<number> {
    return stat(this.path).then((s) => s.size, () => 0);
  }

  /**
   * The file from its first byte as it arrives; the stream ends once the
   * writer finished and everything was read, and errors with the writer's
   * failure or the signal's reason.
   */
  stream(signal: AbortSignal): Readable {
    return Readable.from(this.#chunks(signal), { objectMode: false });
  }

  async *#chunks(signal: AbortSignal): AsyncGenerator<Buffer> {
    let handle: Awaited<ReturnType<typeof open>> | null = null;
    let position = 0;
    try {
      for (;;) {
        signal.throwIfAborted();
        this.check();
        const next = this.changed();
        const done = this.#finished;
        if (!handle) handle = await open(this.path, "r").catch(() => null);
        let read = 0;
        if (handle) {
          const buffer = Buffer.allocUnsafe(READ_CHUNK);
          ({ bytesRead: read } = await handle.read(buffer, 0, READ_CHUNK, position));
          if (read > 0) {
            position += read;
            yield buffer.subarray(0, read);
            continue;
          }
        }
        // Nothing new: the end, if the writer had finished before this read; else wait for its next note.
        if (done) return;
        await abortable(next, signal);
      }
    } finally {
      await handle?.close();
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    this.#next = null;
    wake?.();
  }
}

/** `promise`, or the signal's reason once it aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => (signal.removeEventListener("abort", onAbort), resolve(value)),
      (error: unknown) => (signal.removeEventListener("abort", onAbort), reject(error)),
    );
  });
}
