import { unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import {
  RPC_IPC_DIR_VARIABLES,
  RPC_VERSION,
  RpcCloseCodes,
  RpcIpcOpcodes,
  RpcLimits,
  rpcIpcName,
} from '@hearth/protocol';
import { encodeFrame, FrameDecoder, FrameError, type IpcFrame } from './framing.js';
import type { RpcPayload, RpcTransportConnection } from './session.js';

/** What the IPC transport asks of the agent: a handshake to accept or refuse, frames, and the end. */
export interface IpcHandlers {
  /** Answers a refusal (a close code and message) or the connection's frame handler and closer. */
  handshake(
    connection: RpcTransportConnection,
    handshake: { v: unknown; client_id: unknown },
  ): Promise<{ frame: (payload: unknown) => void; closed: () => void } | { code: number; message: string }>;
}

/**
 * The directory clients search for the socket (PROTOCOL.md §H): the first of XDG_RUNTIME_DIR, TMPDIR, TMP
 * and TEMP that is set and not empty, else /tmp. `@xhayper/discord-rpc` reads them with `??`, so an empty
 * XDG_RUNTIME_DIR stops it finding any socket (VOICE-RPC.md §5 quirk 2): unset it rather than empty it.
 */
export function ipcDirectory(env: NodeJS.ProcessEnv): string {
  for (const name of RPC_IPC_DIR_VARIABLES) {
    const value = env[name];
    if (value) return value.replace(/\/+$/, '') || '/';
  }
  return '/tmp';
}

/** The path of slot `n`: a named pipe on Windows, a socket file elsewhere. */
export function ipcPath(
  directory: string,
  slot: number,
  platform: NodeJS.Platform = process.platform,
): string {
  return platform === 'win32' ? `\\\\?\\pipe\\${rpcIpcName(slot)}` : join(directory, rpcIpcName(slot));
}

export interface IpcOptions {
  directory: string;
  frameMaxBytes?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * The IPC transport: listens on the first free `discord-ipc-N` (N 0–9). A socket file whose agent is gone
 * (nothing accepts a connection on it) is removed and taken; a live one is left to its agent.
 */
export class IpcTransport {
  readonly path: string;
  readonly slot: number;
  readonly #server: Server;
  readonly #sockets: Set<Socket>;

  private constructor(server: Server, path: string, slot: number, sockets: Set<Socket>) {
    this.#server = server;
    this.path = path;
    this.slot = slot;
    this.#sockets = sockets;
  }

  static async listen(options: IpcOptions, handlers: IpcHandlers): Promise<IpcTransport> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      serveSocket(socket, handlers, options);
    });
    for (let slot = 0; slot < RpcLimits.ipcSlots; slot++) {
      const path = ipcPath(options.directory, slot);
      if (await tryListen(server, path)) return new IpcTransport(server, path, slot, sockets);
      if (process.platform !== 'win32' && !(await isAlive(path))) {
        // A killed agent's socket file: nothing answers on it, so it is ours to take.
        try {
          unlinkSync(path);
        } catch {
          continue;
        }
        options.log?.('rpc ipc reclaimed a stale socket', { path });
        if (await tryListen(server, path)) return new IpcTransport(server, path, slot, sockets);
      }
    }
    throw new Error(
      `rpc: every IPC slot discord-ipc-0…${RpcLimits.ipcSlots - 1} in ${options.directory} is taken`,
    );
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    if (process.platform !== 'win32') {
      try {
        unlinkSync(this.path);
      } catch {
        // Already gone (Node removes the file when the server closes).
      }
    }
  }
}

function tryListen(server: Server, path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') resolve(false);
      else reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(true);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(path);
  });
}

/** Whether something accepts connections at `path` (a live agent or platform client). */
function isAlive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/**
 * One client socket: HANDSHAKE first, then FRAMEs; PING is answered with PONG carrying the same data.
 * A frame over the limit, invalid JSON or an unknown opcode ends this connection only, with CLOSE 1003.
 */
function serveSocket(socket: Socket, handlers: IpcHandlers, options: IpcOptions): void {
  const decoder = new FrameDecoder(options.frameMaxBytes ?? RpcLimits.frameMaxBytes);
  let state: 'handshake' | 'waiting' | 'open' | 'closed' = 'handshake';
  let frame: ((payload: unknown) => void) | undefined;
  let closed: (() => void) | undefined;
  const pending: unknown[] = [];

  const connection: RpcTransportConnection = {
    transport: 'ipc',
    send(payload: RpcPayload) {
      if (state !== 'closed' && !socket.destroyed) socket.write(encodeFrame(RpcIpcOpcodes.Frame, payload));
    },
    close(code: number, message: string) {
      if (state === 'closed') return;
      state = 'closed';
      if (!socket.destroyed) socket.end(encodeFrame(RpcIpcOpcodes.Close, { code, message }));
      // end() flushes the CLOSE; a client that never reads must not keep the socket open.
      setTimeout(() => socket.destroy(), 1000).unref();
    },
  };

  const onFrame = (op: number, data: unknown) => {
    switch (op) {
      case RpcIpcOpcodes.Ping:
        if (!socket.destroyed) socket.write(encodeFrame(RpcIpcOpcodes.Pong, data));
        return;
      case RpcIpcOpcodes.Pong:
        return;
      case RpcIpcOpcodes.Close:
        state = 'closed';
        socket.end();
        return;
      case RpcIpcOpcodes.Handshake: {
        if (state !== 'handshake') {
          connection.close(RpcCloseCodes.Unsupported, 'Already handshaken');
          return;
        }
        state = 'waiting';
        const hello = (typeof data === 'object' && data !== null ? data : {}) as {
          v?: unknown;
          client_id?: unknown;
        };
        if (Number(hello.v ?? RPC_VERSION) !== RPC_VERSION) {
          connection.close(RpcCloseCodes.InvalidVersion, 'Invalid Version');
          return;
        }
        handlers.handshake(connection, { v: hello.v, client_id: hello.client_id }).then(
          (result) => {
            if ('code' in result) {
              connection.close(result.code, result.message);
              return;
            }
            if (state === 'closed') {
              result.closed();
              return;
            }
            frame = result.frame;
            closed = result.closed;
            state = 'open';
            for (const payload of pending.splice(0)) frame(payload);
          },
          () => connection.close(RpcCloseCodes.Abnormal, 'Handshake failed'),
        );
        return;
      }
      case RpcIpcOpcodes.Frame:
        if (state === 'handshake') {
          connection.close(RpcCloseCodes.Unsupported, 'Handshake first');
          return;
        }
        if (state === 'waiting') pending.push(data);
        else if (state === 'open') frame?.(data);
        return;
      default:
        connection.close(RpcCloseCodes.Unsupported, `Unknown opcode ${op}`);
    }
  };

  const isClosed = () => state === 'closed';
  socket.on('data', (chunk: Buffer) => {
    if (isClosed()) return;
    let frames: IpcFrame[];
    let failure: FrameError | undefined;
    try {
      frames = decoder.push(chunk);
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      failure = error;
      frames = error.frames;
    }
    for (const { op, data } of frames) {
      if (isClosed()) return;
      onFrame(op, data);
    }
    if (failure && !isClosed()) {
      options.log?.('rpc ipc bad frame', { reason: failure.message });
      connection.close(RpcCloseCodes.Unsupported, failure.message);
    }
  });
  socket.on('error', () => {
    // The close that follows ends the session.
  });
  socket.on('close', () => {
    state = 'closed';
    closed?.();
  });
}
