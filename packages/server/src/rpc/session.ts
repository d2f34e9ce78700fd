import type { RpcErrorCode } from '@hearth/protocol';
import type { ActivityInput } from '../domains/presence/schemas.js';

/** An RPC payload in either direction (PROTOCOL.md §H Payload). */
export interface RpcPayload {
  cmd: string;
  nonce?: string | null;
  evt?: string | null;
  args?: unknown;
  data?: unknown;
}

/** A refusal of a command, answered as `evt: "ERROR", data: {code, message}`. */
export class RpcError extends Error {
  readonly code: RpcErrorCode;

  constructor(code: RpcErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** One client's connection as a transport carries it: IPC socket or WebSocket. */
export interface RpcTransportConnection {
  readonly transport: 'ipc' | 'websocket';
  send(payload: RpcPayload): void;
  /** Ends the connection with an RPC close code (a CLOSE frame on IPC, a close frame on WebSocket). */
  close(code: number, message: string): void;
}

/** The application an RPC connection speaks for, as GET /applications/{id}/rpc describes it. */
export interface RpcApplication {
  id: string;
  name: string;
  icon: string | null;
  description: string;
  rpc_origins: string[];
}

/** What AUTHENTICATE established: the game's token for this user, checked with the server. */
export interface RpcAuthentication {
  accessToken: string;
  scopes: string[];
  expires: string;
  user: Record<string, unknown>;
  application: Record<string, unknown>;
}

/** A SUBSCRIBE: the event and the arguments that narrow it (a channel, a guild). */
export interface Subscription {
  evt: string;
  args: Record<string, unknown>;
}

/** One connected game: its application, its authentication, its subscriptions, its activity. */
export class RpcSession {
  readonly id: number;
  readonly application: RpcApplication;
  readonly connection: RpcTransportConnection;
  auth: RpcAuthentication | undefined;
  readonly subscriptions = new Map<string, Subscription>();
  /** Users who asked to join this game's party and have not been answered (ACTIVITY_JOIN_REQUEST). */
  readonly joinRequests = new Set<string>();
  /** The game's current activity (SET_ACTIVITY), as the gateway received it. */
  activity: ActivityInput | undefined;
  #closed = false;

  constructor(id: number, application: RpcApplication, connection: RpcTransportConnection) {
    this.id = id;
    this.application = application;
    this.connection = connection;
  }

  get closed(): boolean {
    return this.#closed;
  }

  markClosed(): void {
    this.#closed = true;
  }

  /** Whether the session's token grants one of `scopes` (an empty list: authentication alone). */
  hasScope(scopes: readonly string[]): boolean {
    if (!this.auth) return false;
    return scopes.length === 0 || scopes.some((scope) => this.auth!.scopes.includes(scope));
  }

  reply(request: RpcPayload, data: unknown): void {
    if (this.#closed) return;
    this.connection.send({ cmd: request.cmd, nonce: request.nonce ?? null, evt: null, data });
  }

  fail(request: Partial<RpcPayload>, error: RpcError): void {
    if (this.#closed) return;
    this.connection.send({
      cmd: request.cmd ?? FALLBACK_COMMAND,
      nonce: request.nonce ?? null,
      evt: 'ERROR',
      data: { code: error.code, message: error.message },
    });
  }

  /** A DISPATCH of `evt` to this session. */
  dispatch(evt: string, data: unknown): void {
    if (this.#closed) return;
    this.connection.send({ cmd: 'DISPATCH', evt, data, nonce: null });
  }
}

/** The command named in an ERROR answering a payload too broken to name one. */
const FALLBACK_COMMAND = 'DISPATCH';

/** The subscription key: one per event and arguments. */
export function subscriptionKey(evt: string, args: Record<string, unknown>): string {
  const keys = Object.keys(args).sort();
  return `${evt}${JSON.stringify(keys.map((key) => [key, args[key]]))}`;
}
