/**
 * The render and upload stages' progress while clips render and upload side
 * by side (clip-pipeline.ts): the render stage's fraction is the clips'
 * render fractions together; the upload stage's share starts once every clip
 * is rendered (earlier uploads count then), as bytes sent of bytes to send.
 */
import type { ProgressTracker } from "../channel/progress.ts";

export class ClipsProgress {
  readonly #progress: Pick<ProgressTracker, "update">;
  readonly #count: number;
  readonly #rendered: number[];
  readonly #sent: number[];
  readonly #total: number[];
  #uploadsOnly = false;

  constructor(progress: Pick<ProgressTracker, "update">, count: number) {
    this.#progress = progress;
    this.#count = count;
    this.#rendered = new Array<number>(count).fill(0);
    this.#sent = new Array<number>(count).fill(0);
    this.#total = new Array<number>(count).fill(0);
  }

  /** Clip `index` is this far (0-1) through its render. */
  rendering(index: number, fraction: number): void {
    this.#rendered[index] = Math.max(this.#rendered[index]!, fraction);
    this.#progress.update(this.#rendered.reduce((a, b) => a + b, 0) / this.#count);
  }

  /** Clip `index` has this many more bytes to upload (its video, then its thumbnail). */
  toUpload(index: number, bytes: number): void {
    this.#total[index] = this.#total[index]! + bytes;
  }

  /** Clip `index` sent this many more bytes. */
  uploaded(index: number, bytes: number): void {
    this.#sent[index] = this.#sent[index]! + bytes;
    this.#uploadProgress();
  }

  /** Every clip is rendered: the upload stage's share of progress starts. */
  rendersDone(): void {
    this.#uploadsOnly = true;
    this.#uploadProgress();
  }

  #uploadProgress(): void {
    if (!this.#uploadsOnly) return;
    const total = this.#total.reduce((a, b) => a + b, 0);
    const sent = this.#sent.reduce((a, b) => a + b, 0);
    this.#progress.update(total > 0 ? sent / total : 1);
  }
}
