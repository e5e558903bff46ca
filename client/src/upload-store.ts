/**
 * Where the command line remembers its unfinished uploads between runs, so
 * running the same `clipjobs submit ./file.mp4` again resumes where the last
 * run stopped: one JSON file mapping tus-js-client's storage keys (the
 * file's path, size and modification time, and the endpoint) to the upload's
 * URL. A finished upload's entry is removed. Writes go through a temporary
 * file and a rename, so a run killed while writing never leaves half a file.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Upload } from "tus-js-client";

type UrlStorage = NonNullable<ConstructorParameters<typeof Upload>[1]["urlStorage"]>;
type PreviousUpload = Awaited<ReturnType<UrlStorage["findAllUploads"]>>[number];
type Stored = Omit<PreviousUpload, "urlStorageKey">;

export class JsonFileUrlStorage implements UrlStorage {
  constructor(private readonly path: string) {}

  private async load(): Promise<Record<string, Stored>> {
    try {
      const parsed = JSON.parse(await readFile(this.path, "utf8")) as unknown;
      return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, Stored>) : {};
    } catch (error) {
      // No file yet, or one that is not ours any more: nothing to resume.
      if ((error as NodeJS.ErrnoException).code === "ENOENT" || error instanceof SyntaxError) return {};
      throw error;
    }
  }

  private async save(entries: Record<string, Stored>): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.path);
  }

  private async find(prefix: string): Promise<PreviousUpload[]> {
    const entries = await this.load();
    return Object.entries(entries)
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, stored]) => ({ ...stored, urlStorageKey: key }));
  }

  findAllUploads(): Promise<PreviousUpload[]> {
    return this.find("tus::");
  }

  findUploadsByFingerprint(fingerprint: string): Promise<PreviousUpload[]> {
    return this.find(`tus::${fingerprint}::`);
  }

  async removeUpload(urlStorageKey: string): Promise<void> {
    const entries = await this.load();
    if (!(urlStorageKey in entries)) return;
    delete entries[urlStorageKey];
    await this.save(entries);
  }

  async addUpload(fingerprint: string, upload: PreviousUpload): Promise<string> {
    const entries = await this.load();
    const key = `tus::${fingerprint}::${crypto.randomUUID()}`;
    const { urlStorageKey: _unused, ...stored } = upload;
    entries[key] = stored;
    await this.save(entries);
    return key;
  }
}
