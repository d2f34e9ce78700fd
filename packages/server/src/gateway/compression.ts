import { constants, createDeflate, type Deflate } from 'node:zlib';

/**
 * `compress=zlib-stream` (PROTOCOL.md §D.1): one deflate context for the whole connection; every message is
 * flushed with Z_SYNC_FLUSH, so each WebSocket frame ends in 00 00 FF FF and the client inflates in order.
 */
export class ZlibStream {
  readonly #deflate: Deflate = createDeflate({ chunkSize: 64 * 1024 });
  #chain: Promise<unknown> = Promise.resolve();

  /** Compresses one message; calls resolve in the order messages were given. */
  compress(message: string | Buffer): Promise<Buffer> {
    const next = this.#chain.then(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          const chunks: Buffer[] = [];
          const collect = (chunk: Buffer) => chunks.push(chunk);
          this.#deflate.on('data', collect);
          this.#deflate.write(message, (error) => {
            if (error) reject(error);
          });
          this.#deflate.flush(constants.Z_SYNC_FLUSH, () => {
            this.#deflate.off('data', collect);
            resolve(Buffer.concat(chunks));
          });
        }),
    );
    this.#chain = next.catch(() => undefined);
    return next;
  }

  close(): void {
    this.#deflate.close();
  }
}
