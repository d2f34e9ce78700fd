import { Agent, request } from 'node:http';

export interface Reply {
  status: number;
  body: string;
}

/**
 * JSON requests to one server over keep-alive connections (`node:http`, lighter on the bench's CPU than
 * `fetch`), for benchmarks that time each request themselves and need its body.
 */
export class JsonClient {
  readonly #base: URL;
  readonly #agent: Agent;

  /** `connections`: sockets kept open to the server, one per request in flight at once. */
  constructor(baseUrl: string, connections: number) {
    this.#base = new URL(baseUrl);
    this.#agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  /** Sends `body` as JSON with `Authorization: <authorization>`; answers the status and the body's text. */
  send(method: string, path: string, authorization: string, body: unknown): Promise<Reply> {
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise<Reply>((resolve, reject) => {
      const outgoing = request(
        {
          agent: this.#agent,
          host: this.#base.hostname,
          port: this.#base.port,
          method,
          path,
          headers: {
            authorization,
            'content-type': 'application/json',
            'content-length': payload.length,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
