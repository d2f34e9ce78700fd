import { createServer, type Server } from 'node:http';

/** One event webhook delivery as received (the platform's signed POST; `type` 1 is an event). */
export interface WebhookDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: { type: number; application_id?: string; event?: { type: string; timestamp: string; data: unknown } };
}

/**
 * A local receiver for event webhooks: point an application's `event_webhooks_url` at `url` (the server
 * must run with `--allow-loopback-urls`, as `startHearth` does). It answers the platform's PING and every
 * event with 204.
 */
export class WebhookReceiver {
  readonly deliveries: WebhookDelivery[] = [];
  readonly url: string;
  readonly #server: Server;
  #cursor = 0;
  #waiters: { match: (d: WebhookDelivery) => boolean; resolve: (d: WebhookDelivery) => void }[] = [];

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  static async listen(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        response.writeHead(204).end();
        const text = Buffer.concat(chunks).toString('utf8');
        receiver?.received({
          headers: request.headers,
          body: JSON.parse(text || '{}') as WebhookDelivery['body'],
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}/events`);
    return receiver;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** Records a delivery and hands it to the first waiter it matches. */
  received(delivery: WebhookDelivery): void {
    this.deliveries.push(delivery);
    const waiter = this.#waiters.find((w) => w.match(delivery));
    if (!waiter) return;
    this.#cursor = this.deliveries.length;
    this.#waiters = this.#waiters.filter((w) => w !== waiter);
    waiter.resolve(delivery);
  }

  /** The next delivery `match` accepts, including one already received and not handed out. */
  next(match: (delivery: WebhookDelivery) => boolean, timeoutMs = 10_000): Promise<WebhookDelivery> {
    for (; this.#cursor < this.deliveries.length; this.#cursor++) {
      const delivery = this.deliveries[this.#cursor] as WebhookDelivery;
      if (match(delivery)) {
        this.#cursor++;
        return Promise.resolve(delivery);
      }
    }
    return new Promise((resolve, reject) => {
      const entry = { match, resolve };
      this.#waiters.push(entry);
      setTimeout(() => {
        if (!this.#waiters.includes(entry)) return;
        this.#waiters = this.#waiters.filter((w) => w !== entry);
        reject(new Error(`no matching webhook delivery within ${timeoutMs} ms`));
      }, timeoutMs).unref();
    });
  }
}

/** Waits for an event webhook of type `type` (`ENTITLEMENT_CREATE`, …); answers its `event.data`. */
export async function waitForWebhook<D = Record<string, unknown>>(
  receiver: WebhookReceiver,
  type: string,
  options: { match?: (data: D) => boolean; timeoutMs?: number } = {},
): Promise<D> {
  const delivery = await receiver.next(
    (d) => d.body.event?.type === type && (options.match?.(d.body.event.data as D) ?? true),
    options.timeoutMs,
  );
  return delivery.body.event?.data as D;
}
