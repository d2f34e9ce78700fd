import net from 'node:net';

/**
 * A TCP proxy in front of a service (PostgreSQL, Redis) that a test can cut and restore, to see how a
 * server copes with losing it, without stopping the service other tests share.
 */
export class TcpProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #cut = false;

  private constructor(server: net.Server) {
    this.#server = server;
  }

  /** Listens on a free loopback port and forwards each connection to `target` (`host:port` of a URL). */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = net.createServer((client) => proxy?.accept(client, target));
    proxy = new TcpProxy(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as net.AddressInfo).port;
  }

  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** Drops every open connection and refuses new ones (they are accepted and reset at once). */
  cut(): void {
    this.#cut = true;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  /** Forwards new connections again. */
  restore(): void {
    this.#cut = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private accept(client: net.Socket, target: { host: string; port: number }): void {
    if (this.#cut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target);
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        this.#sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/** The host and port a service URL names. */
export function targetOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || defaultPort) };
}
