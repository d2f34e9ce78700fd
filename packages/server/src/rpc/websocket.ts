import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { RPC_VERSION, RpcCloseCodes, RpcLimits } from '@hearth/protocol';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import type { RpcApplication, RpcPayload, RpcTransportConnection } from './session.js';

/** What the WebSocket transport asks of the agent. */
export interface WebSocketHandlers {
  /** The application of a client id, or undefined when the server knows none. */
  application(clientId: string): Promise<RpcApplication | undefined>;
  /** A connection accepted: answers its frame handler and closer. */
  open(
    connection: RpcTransportConnection,
    application: RpcApplication,
  ): { frame: (payload: unknown) => void; closed: () => void };
  /** POST /oauth2/token: the token exchange, passed to the Hearth server as it came. */
  tokenExchange(
    body: string,
    headers: { contentType?: string; authorization?: string },
  ): Promise<{ status: number; body: string }>;
}

export interface WebSocketOptions {
  /** First port tried; default 6463 (PROTOCOL.md §H). */
  portBase?: number;
  portCount?: number;
  host?: string;
  frameMaxBytes?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * The WebSocket transport (PROTOCOL.md §H): `ws://127.0.0.1:{6463…6472}/?v=1&client_id=…&encoding=json`,
 * the Origin checked against the application's RPC origins. The same port answers HTTP: GET is 404 (how
 * `discord-rpc` finds the port) and POST /oauth2/token proxies the token exchange to the server.
 */
export class WebSocketTransport {
  readonly port: number;
  readonly #server: Server;
  readonly #wss: WebSocketServer;

  private constructor(server: Server, wss: WebSocketServer, port: number) {
    this.#server = server;
    this.#wss = wss;
    this.port = port;
  }

  static async listen(options: WebSocketOptions, handlers: WebSocketHandlers): Promise<WebSocketTransport> {
    const maxPayload = options.frameMaxBytes ?? RpcLimits.frameMaxBytes;
    const wss = new WebSocketServer({ noServer: true, maxPayload });
    const server = createServer((request, response) => void serveHttp(request, response, handlers));
    server.on(
      'upgrade',
      (request, socket, head) => void upgrade(wss, handlers, request, socket, head, options),
    );
    const base = options.portBase ?? RpcLimits.wsPortBase;
    const count = options.portCount ?? RpcLimits.wsPortCount;
    const host = options.host ?? '127.0.0.1';
    for (let port = base; port < base + count; port++) {
      if (await tryListen(server, port, host)) return new WebSocketTransport(server, wss, port);
    }
    throw new Error(`rpc: every WebSocket port ${base}–${base + count - 1} on ${host} is taken`);
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function tryListen(server: Server, port: number, host: string): Promise<boolean> {
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
    server.listen(port, host);
  });
}

const NOT_FOUND = JSON.stringify({ code: 0, message: '404: Not Found' });

async function serveHttp(request: IncomingMessage, response: ServerResponse, handlers: WebSocketHandlers) {
  const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname.replace(/\/+$/, '');
  if (request.method === 'POST' && path === '/oauth2/token') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > RpcLimits.frameMaxBytes) {
        response.writeHead(413, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ code: 0, message: 'Request entity too large' }));
        return;
      }
      chunks.push(chunk);
    }
    try {
      const answer = await handlers.tokenExchange(Buffer.concat(chunks).toString('utf8'), {
        ...(request.headers['content-type'] ? { contentType: request.headers['content-type'] } : {}),
        ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
      });
      response.writeHead(answer.status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(answer.body);
    } catch {
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ code: 0, message: 'The Hearth server did not answer' }));
    }
    return;
  }
  response.writeHead(404, { 'content-type': 'application/json' });
  response.end(NOT_FOUND);
}

/** Accepts the upgrade, then judges version, encoding, client id and origin; a refusal is a close code. */
async function upgrade(
  wss: WebSocketServer,
  handlers: WebSocketHandlers,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  options: WebSocketOptions,
): Promise<void> {
  const query = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams;
  const origin = request.headers.origin;
  const ws = await new Promise<WebSocket>((resolve) => wss.handleUpgrade(request, socket, head, resolve));
  // Messages that arrive while the application is looked up wait for the session.
  const early: Array<{ raw: RawData; binary: boolean }> = [];
  let receive: ((raw: RawData, binary: boolean) => void) | undefined;
  ws.on('message', (raw: RawData, binary: boolean) => {
    if (receive) receive(raw, binary);
    else early.push({ raw, binary });
  });
  ws.on('error', () => {
    // A frame over maxPayload closes with 1009; the close that follows ends the session.
  });
  const refuse = (code: number, message: string) => {
    options.log?.('rpc websocket refused', { code, message });
    ws.close(code, message);
  };
  if (Number(query.get('v') ?? Number.NaN) !== RPC_VERSION)
    return refuse(RpcCloseCodes.InvalidVersion, 'Invalid Version');
  const encoding = query.get('encoding') ?? 'json';
  if (encoding !== 'json') return refuse(RpcCloseCodes.InvalidEncoding, 'Invalid Encoding');
  const clientId = query.get('client_id') ?? '';
  const application = /^\d{1,20}$/.test(clientId)
    ? await handlers.application(clientId).catch(() => undefined)
    : undefined;
  if (!application) return refuse(RpcCloseCodes.InvalidClientId, 'Invalid Client ID');
  if (!originAllowed(origin, application.rpc_origins))
    return refuse(RpcCloseCodes.InvalidOrigin, 'Invalid Origin');
  if (ws.readyState !== ws.OPEN) return;

  const connection: RpcTransportConnection = {
    transport: 'websocket',
    send(payload: RpcPayload) {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(payload));
    },
    close(code: number, message: string) {
      if (ws.readyState === ws.OPEN) ws.close(code, message);
    },
  };
  const session = handlers.open(connection, application);
  receive = (raw, binary) => {
    if (binary) {
      connection.close(RpcCloseCodes.Unsupported, 'Binary frames are not supported');
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString()) as unknown;
    } catch {
      connection.close(RpcCloseCodes.Unsupported, 'Payload is not valid JSON');
      return;
    }
    session.frame(payload);
  };
  for (const message of early.splice(0)) receive(message.raw, message.binary);
  ws.on('close', () => session.closed());
}

/** Whether the Origin header names one of the application's RPC origins (scheme, host and port). */
export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (!origin) return false;
  const normal = normalOrigin(origin);
  return normal !== undefined && allowed.some((entry) => normalOrigin(entry) === normal);
}

function normalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.origin === 'null' ? `${url.protocol}//${url.host}` : url.origin;
  } catch {
    return undefined;
  }
}
