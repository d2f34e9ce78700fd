import { RPC_IPC_HEADER_BYTES, RpcIpcOpcodes, RpcLimits } from '@hearth/protocol';

/** One IPC frame as read: its opcode and its JSON payload. */
export interface IpcFrame {
  op: number;
  data: unknown;
}

/** Why a byte stream cannot be read as frames; the connection closes with 1003 and this message. */
export class FrameError extends Error {
  /** The good frames read before the bad one, to be served before the connection closes. */
  frames: IpcFrame[] = [];
}

/** `<op u32 LE><len u32 LE><UTF-8 JSON>` (PROTOCOL.md §H Framing). */
export function encodeFrame(op: number, data: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(data) ?? 'null', 'utf8');
  const header = Buffer.alloc(RPC_IPC_HEADER_BYTES);
  header.writeUInt32LE(op, 0);
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body]);
}

const KNOWN_OPS = new Set<number>(Object.values(RpcIpcOpcodes));

/**
 * Cuts a stream into frames, whatever the chunking of the reads. The header is judged before its body
 * arrives, so a length over the limit is refused without buffering it.
 */
export class FrameDecoder {
  #buffer: Buffer = Buffer.alloc(0);
  readonly #maxBytes: number;

  constructor(maxBytes: number = RpcLimits.frameMaxBytes) {
    this.#maxBytes = maxBytes;
  }

  /** The frames completed by `chunk`; throws FrameError at the first one that cannot be read. */
  push(chunk: Buffer): IpcFrame[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const frames: IpcFrame[] = [];
    try {
      while (this.#buffer.length >= RPC_IPC_HEADER_BYTES) {
        const op = this.#buffer.readUInt32LE(0);
        const length = this.#buffer.readUInt32LE(4);
        if (!KNOWN_OPS.has(op)) throw new FrameError(`Unknown opcode ${op}`);
        if (length > this.#maxBytes) {
          throw new FrameError(`Frame of ${length} bytes exceeds ${this.#maxBytes}`);
        }
        if (this.#buffer.length < RPC_IPC_HEADER_BYTES + length) break;
        const body = this.#buffer.subarray(RPC_IPC_HEADER_BYTES, RPC_IPC_HEADER_BYTES + length);
        this.#buffer = this.#buffer.subarray(RPC_IPC_HEADER_BYTES + length);
        frames.push({ op, data: parseBody(body) });
      }
    } catch (error) {
      if (error instanceof FrameError) error.frames = frames;
      throw error;
    }
    return frames;
  }
}

function parseBody(body: Buffer): unknown {
  // An empty body (a bare PING or CLOSE of some clients) reads as no data.
  if (body.length === 0) return null;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new FrameError('Payload is not valid JSON');
  }
}
