import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WEBHOOK_TIMEOUT_MS } from '@hearth/protocol';
import { createHearth, type Hearth, testConfig } from '@hearth/server';
import { eventBody } from '../packages/server/src/domains/webhooks/delivery.js';
import { recordWebhookEvent } from '../packages/server/src/storage/outbox.js';
import type { Benchmark, Figures, Result } from './benchmark.js';
import { median } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

/** Events per round. */
const EVENTS = 2_000;
/** Requests in flight at once on both sides: Hearth's worker leases and sends this many per read. */
const CONCURRENCY = 64;
const ROUNDS = 3;

/** A local receiver answering 204 to every POST, counting them. */
class Receiver {
  count = 0;
  #waiting: { target: number; resolve: () => void } | undefined;
  readonly server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(204).end();
      this.count++;
      if (this.#waiting && this.count >= this.#waiting.target) this.#waiting.resolve();
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/events`;
  }

  until(target: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.count >= target) resolve();
      else this.#waiting = { target, resolve };
    });
  }
}

/**
 * Hearth's durable delivery (lease a batch from the outbox, sign each event with the application's Ed25519
 * key, POST it with a 3 s timeout, write the outcome and the attempt in one transaction) beside a plain loop
 * that only signs and POSTs the same envelopes, with the same concurrency, to the same local receiver.
 */
const webhookDelivery: Benchmark = {
  name: 'webhook-delivery',
  description: 'signed webhook events to a local receiver (events/s)',
  timeoutSeconds: 180,
  async run(): Promise<Result> {
    const scratch = scratchDir('hearth-bench-webhooks-');
    const receiver = new Receiver();
    const url = await receiver.listen();
    const hearth = await createHearth({
      config: testConfig({
        databaseUrl: `sqlite:${join(scratch.path, 'h.sqlite')}`,
        webhookPollMs: 1000,
        // The receiver is on loopback, over http:, as in development.
        allowLoopbackUrls: true,
      }),
    });
    try {
      await hearth.listen();
      const { application, botToken } = await hearth.services.applications.createApplication({
        name: 'Bench',
      });
      const configured = await fetch(`${hearth.url}/api/v10/applications/@me`, {
        method: 'PATCH',
        headers: { authorization: `Bot ${botToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event_webhooks_url: url, event_webhooks_types: ['LOBBY_MESSAGE_CREATE'] }),
      });
      if (configured.status !== 200) throw new Error(`configuring the webhook failed: ${configured.status}`);
      const signer = await hearth.services.applications.eventSigner(application.id);
      if (!signer) throw new Error('no signer');

      const sides = {
        hearth: {
          label: 'Hearth',
          rates: [] as number[],
          run: () => hearthRound(hearth, application.id, receiver),
        },
        bare: {
          label: 'signed POST loop',
          rates: [] as number[],
          run: () => bareRound(url, signer, application.id, receiver),
        },
      };
      for (const side of [sides.bare, sides.hearth]) {
        const rate = await side.run();
        progress(`  warm-up ${side.label}: ${Math.round(rate)} events/s`);
      }
      for (let i = 0; i < ROUNDS; i++) {
        for (const side of i % 2 === 0 ? [sides.bare, sides.hearth] : [sides.hearth, sides.bare]) {
          const rate = await side.run();
          side.rates.push(rate);
          progress(`  round ${i + 1}/${ROUNDS} ${side.label}: ${Math.round(rate)} events/s`);
        }
      }
      const figures = (side: { label: string; rates: number[] }): Figures => ({
        label: side.label,
        throughput: median(side.rates),
        rounds: side.rates,
      });
      const baseline = figures(sides.bare);
      const subject = figures(sides.hearth);
      return {
        unit: 'events/s',
        baseline,
        hearth: subject,
        ratio: subject.throughput / baseline.throughput,
        notes: [
          `a round: ${EVENTS} LOBBY_MESSAGE_CREATE events, ${CONCURRENCY} requests in flight, one local receiver ` +
            'answering 204 in the bench process; 1 warm-up and 3 rounds per side (AB BA AB), medians',
          'Hearth: events recorded in the outbox (SQLite file, one transaction), then timed from the commit until ' +
            'the receiver had them all: lease, sign (Ed25519), POST, then each outcome and attempt written (one transaction per batch)',
          'baseline: the same envelopes, signed (node:crypto Ed25519) and POSTed with fetch from a plain loop',
        ],
      };
    } finally {
      await hearth.close();
      await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
      scratch.remove();
    }
  },
};

export default webhookDelivery;

let sequence = 0;

async function hearthRound(hearth: Hearth, applicationId: string, receiver: Receiver): Promise<number> {
  const target = receiver.count + EVENTS;
  const createdAt = hearth.clock.now();
  let started = 0;
  // The commit wakes the worker at once; the clock starts with it.
  await hearth.storage.transaction(async (tx) => {
    for (let i = 0; i < EVENTS; i++) {
      await recordWebhookEvent(tx, {
        id: String(1_000_000_000_000_000_000n + BigInt(++sequence)),
        type: 'LOBBY_MESSAGE_CREATE',
        applicationId,
        data: { id: String(sequence), lobby_id: '1', content: 'hello' },
        createdAt,
      });
    }
    started = performance.now();
  });
  await receiver.until(target);
  return EVENTS / ((performance.now() - started) / 1000);
}

async function bareRound(
  url: string,
  signer: (message: Buffer) => string,
  applicationId: string,
  receiver: Receiver,
): Promise<number> {
  const target = receiver.count + EVENTS;
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < EVENTS) {
      next++;
      const body = eventBody({
        applicationId,
        type: 'LOBBY_MESSAGE_CREATE',
        createdAt: Date.now(),
        payload: JSON.stringify({ id: String(++sequence), lobby_id: '1', content: 'hello' }),
      });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-signature-ed25519': signer(Buffer.from(timestamp + body)),
          'x-signature-timestamp': timestamp,
        },
        body,
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await receiver.until(target);
  return EVENTS / ((performance.now() - started) / 1000);
}
