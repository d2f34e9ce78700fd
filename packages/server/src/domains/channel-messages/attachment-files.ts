import { createReadStream, type ReadStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Where attachment bytes live: `{dataDir}/attachments/{key}`, a key per attachment (`{channel}/{id}`), with
 * uploads in progress under `.uploads` until their message is committed. A file reaches its key only by a
 * rename, so a key never names a partly written file. (An S3-compatible store would implement the same four
 * operations.)
 */
export interface AttachmentFiles {
  /** The directory multipart uploads are streamed into. */
  readonly uploads: string;
  /** Moves an uploaded file to its key. */
  place(uploaded: string, key: string): Promise<void>;
  remove(keys: readonly string[]): Promise<void>;
  open(key: string): Promise<{ stream: ReadStream; size: number } | undefined>;
}

export class DiskAttachmentFiles implements AttachmentFiles {
  readonly #root: string;
  readonly uploads: string;

  constructor(dataDir: string) {
    this.#root = join(dataDir, 'attachments');
    this.uploads = join(this.#root, '.uploads');
  }

  async place(uploaded: string, key: string): Promise<void> {
    const target = this.#path(key);
    await mkdir(dirname(target), { recursive: true });
    await rename(uploaded, target);
  }

  async remove(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => rm(this.#path(key), { force: true })));
  }

  async open(key: string): Promise<{ stream: ReadStream; size: number } | undefined> {
    const path = this.#path(key);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    // Bounded by the size, the stream ends with its last chunk instead of after one more read: the
    // response ends as its last byte is sent, and a server closing meanwhile sees the connection idle.
    return { stream: createReadStream(path, { start: 0, end: Math.max(0, info.size - 1) }), size: info.size };
  }

  /** Keys are made of snowflakes here, never of what a client sent; the check keeps it so. */
  #path(key: string): string {
    if (!/^\d+\/\d+$/.test(key)) throw new Error(`not an attachment key: ${key}`);
    return join(this.#root, key);
  }
}
