import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nacl from 'tweetnacl';

/** One request the receiver accepted or refused, as it arrived. */
export interface Delivery {
  timestampHeader: string;
  signatureHeader: string;
  rawBody: string;
  body: { version: number; application_id: string; type: number; event?: WebhookEvent };
  /** What the receiver answered. */
  answered: number;
  /** Whether the signature verified (tweetnacl, no Hearth code). */
  verified: boolean;
}

export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** Decides the answer to a verified request; default 204. */
export type Policy = (delivery: Omit<Delivery, 'answered'>, index: number) => number;

/**
 * A game backend's webhook endpoint: verifies `X-Signature-Ed25519` over `X-Signature-Timestamp` + raw body
 * with the application's public key using tweetnacl (a third-party implementation), answers 401 to a bad
 * signature as receivers must (PROTOCOL.md §F.2), and records everything.
 */
export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  #server: Server;
  #publicKey: Uint8Array;
  #waiters: { test: (deliveries: Delivery[]) => boolean; resolve: () => void }[] = [];
  policy: Policy;

  private constructor(server: Server, publicKeyHex: string, policy: Policy) {
    this.#server = server;
    this.#publicKey = Buffer.from(publicKeyHex, 'hex');
    this.policy = policy;
  }

  static async listen(publicKeyHex: string, policy: Policy = () => 204, port = 0): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server, publicKeyHex, policy);
    server.on('request', (request, response) => {
      void readBody(request).then((rawBody) => {
        const answered = receiver.#receive(request, rawBody);
        response.writeHead(answered, answered === 204 ? {} : { 'content-type': 'application/json' });
        response.end(answered === 204 ? undefined : '{"error":"refused"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/events`;
  }

  /** Events (not PINGs) received with a good signature. */
  get events(): WebhookEvent[] {
    return this.deliveries.filter((d) => d.verified && d.body.event).map((d) => d.body.event as WebhookEvent);
  }

  /** Resolves once the deliveries so far satisfy `test`. */
  until(test: (deliveries: Delivery[]) => boolean): Promise<Delivery[]> {
    return new Promise((resolve) => {
      const waiter = { test, resolve: () => resolve(this.deliveries) };
      if (test(this.deliveries)) waiter.resolve();
      else this.#waiters.push(waiter);
    });
  }

  /** Resolves with the deliveries of `type` once `count` of them have arrived (any answer). */
  async untilEvents(type: string, count = 1): Promise<Delivery[]> {
    const ofType = (all: Delivery[]) => all.filter((d) => d.body.event?.type === type);
    return ofType(await this.until((all) => ofType(all).length >= count));
  }

  verify(timestamp: string, rawBody: string, signatureHex: string): boolean {
    if (!/^[0-9a-f]{128}$/.test(signatureHex)) return false;
    return nacl.sign.detached.verify(
      Buffer.from(timestamp + rawBody),
      Buffer.from(signatureHex, 'hex'),
      this.#publicKey,
    );
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #receive(request: IncomingMessage, rawBody: string): number {
    const timestampHeader = String(request.headers['x-signature-timestamp'] ?? '');
    const signatureHeader = String(request.headers['x-signature-ed25519'] ?? '');
    const verified = this.verify(timestampHeader, rawBody, signatureHeader);
    let body: Delivery['body'];
    try {
      body = JSON.parse(rawBody) as Delivery['body'];
    } catch {
      body = { version: 0, application_id: '', type: -1 };
    }
    const seen = { timestampHeader, signatureHeader, rawBody, body, verified };
    const answered = verified ? this.policy(seen, this.deliveries.length) : 401;
    this.deliveries.push({ ...seen, answered });
    this.#waiters = this.#waiters.filter((waiter) => {
      if (!waiter.test(this.deliveries)) return true;
      waiter.resolve();
      return false;
    });
    return answered;
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
