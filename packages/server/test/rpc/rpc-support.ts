import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcIpcOpcodes } from '@hearth/protocol';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, type TestGame } from '../../../../test-support/oauth.js';
import type { RpcAgentOptions } from '../../src/rpc/agent.js';
import { RpcAgent } from '../../src/rpc/agent.js';

/** A private directory for `discord-ipc-N`, removed by `remove()`. */
export function ipcDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'hearth-rpc-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The agent's user: a player with a session token. */
export async function agentUser(hearth: TestHearth, name?: string) {
  const created = await createPlayer(hearth, name ?? `rpc${Math.random().toString(36).slice(2, 10)}`);
  return { id: created.user.id, username: created.user.username, token: created.token };
}

/** An agent in this process against `hearth`, signed in with `token`. */
export function startAgent(
  hearth: TestHearth,
  token: string,
  options: Partial<RpcAgentOptions> = {},
): Promise<RpcAgent> {
  return RpcAgent.start({ serverUrl: hearth.url, token, reconnectDelayMs: 50, ...options });
}

/** A game with RPC origins registered, through the operator's path. */
export async function rpcGame(
  hearth: TestHearth,
  origins: string[] = ['https://game.example'],
): Promise<TestGame> {
  const game = await createGame(hearth);
  await hearth.services.applications.adminUpdate(game.id, { rpc_origins: origins });
  return game;
}

/** One IPC frame as a raw client reads it. */
export interface RawFrame {
  op: number;
  data: unknown;
}

/**
 * A raw IPC client: no library between the test and the wire (PROTOCOL.md §H Framing). It keeps every
 * frame and hands them out in order; `ended` settles when the agent closes the socket.
 */
export class RawIpcClient {
  readonly frames: RawFrame[] = [];
  readonly socket: Socket;
  readonly ended: Promise<void>;
  #buffer = Buffer.alloc(0);
  /** Frames handed out; the others stay available to later `next` calls, whatever their order. */
  readonly #taken = new Set<number>();
  #wake: (() => void) | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      while (this.#buffer.length >= 8) {
        const length = this.#buffer.readUInt32LE(4);
        if (this.#buffer.length < 8 + length) break;
        const body = this.#buffer.subarray(8, 8 + length).toString('utf8');
        this.frames.push({
          op: this.#buffer.readUInt32LE(0),
          data: body ? (JSON.parse(body) as unknown) : null,
        });
        this.#buffer = this.#buffer.subarray(8 + length);
      }
      this.#wake?.();
    });
    this.ended = new Promise((resolve) => {
      socket.once('close', () => {
        resolve();
        this.#wake?.();
      });
    });
  }

  static connect(path: string): Promise<RawIpcClient> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      socket.once('connect', () => resolve(new RawIpcClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends `<op><len><body>`; a string body goes as it is (to send bad JSON). */
  send(op: number, data: unknown): void {
    const body = Buffer.from(typeof data === 'string' ? data : JSON.stringify(data), 'utf8');
    this.sendRaw(op, body);
  }

  sendRaw(op: number, body: Buffer, declaredLength = body.length): void {
    const header = Buffer.alloc(8);
    header.writeUInt32LE(op, 0);
    header.writeUInt32LE(declaredLength, 4);
    this.socket.write(Buffer.concat([header, body]));
  }

  handshake(clientId: string): void {
    this.send(RpcIpcOpcodes.Handshake, { v: 1, client_id: clientId });
  }

  /** The first frame not yet handed out that matches, waiting at most `timeoutMs`. */
  async next(match: (frame: RawFrame) => boolean = () => true, timeoutMs = 5_000): Promise<RawFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((frame, i) => !this.#taken.has(i) && match(frame));
      if (index >= 0) {
        this.#taken.add(index);
        return this.frames[index]!;
      }
      if (this.socket.destroyed && this.socket.readableEnded) {
        throw new Error(`closed without a matching frame; got ${JSON.stringify(this.frames)}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame; got ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The reply to a command sent with `nonce`. */
  command(cmd: string, args: unknown, evt?: string): Promise<RawFrame> {
    const nonce = Math.random().toString(36).slice(2);
    this.send(RpcIpcOpcodes.Frame, { cmd, args, nonce, ...(evt ? { evt } : {}) });
    return this.next((frame) => (frame.data as { nonce?: string } | null)?.nonce === nonce);
  }

  close(): void {
    this.socket.destroy();
  }
}
