import { afterAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame } from '../../../../test-support/oauth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { recordWebhookEvent } from '../../src/storage/outbox.js';

/**
 * The outbox is a queue shared by every node on one database (PROTOCOL.md §F.2): each row is leased by one
 * node at a time, so three nodes polling as fast as they can still deliver every event exactly once.
 * (Nodes on one SQLite file are separate processes, one connection each: the crash test covers that.)
 */
const postgresUp = await postgresAvailable();
const postgres = postgresUp ? postgresSchema() : undefined;

const engines = [{ name: 'PostgreSQL', url: postgres?.url ?? '', available: postgresUp }];

afterAll(async () => {
  await postgres?.drop();
});

const EVENTS_PER_NODE = 40;

for (const engine of engines) {
  describe.skipIf(!engine.available)(`webhook queue on ${engine.name}`, () => {
    const nodes: TestHearth[] = [];
    let receiver: WebhookReceiver | undefined;
    afterAll(async () => {
      for (const node of nodes) await node.close();
      await receiver?.close();
    });

    it('three nodes deliver every event exactly once, whichever node recorded it', async () => {
      for (let i = 0; i < 3; i++) {
        nodes.push(await startHearth({ databaseUrl: engine.url, webhookPollMs: 5, workerId: i + 1 }));
      }
      const [first] = nodes as [TestHearth];
      const game = await createGame(first);
      const app = (await (await first.api('/applications/@me', { auth: `Bot ${game.botToken}` })).json()) as {
        verify_key: string;
      };
      receiver = await WebhookReceiver.listen(app.verify_key);
      const configured = await first.api('/applications/@me', {
        method: 'PATCH',
        auth: `Bot ${game.botToken}`,
        body: { event_webhooks_url: receiver.url, event_webhooks_types: ['LOBBY_MESSAGE_CREATE'] },
      });
      expect(configured.status).toBe(200);

      const expected: number[] = [];
      await Promise.all(
        nodes.map(async (node, index) => {
          for (let i = 0; i < EVENTS_PER_NODE; i++) {
            const n = index * EVENTS_PER_NODE + i;
            expected.push(n);
            await node.storage.transaction((tx) =>
              recordWebhookEvent(tx, {
                id: `${node.config.workerId}${String(n).padStart(6, '0')}`,
                type: 'LOBBY_MESSAGE_CREATE',
                applicationId: game.id,
                data: { n },
                createdAt: Date.UTC(2026, 0, 1),
              }),
            );
          }
        }),
      );
      await receiver.untilEvents('LOBBY_MESSAGE_CREATE', expected.length);
      // The last answers may still be being written down.
      await expect
        .poll(async () => {
          const log = await first.services.webhooks.log(game.id, 1000);
          return log.filter((entry) => entry.status === 'delivered' && entry.attempts === 1).length;
        })
        .toBe(expected.length);
      const received = receiver.events.map((event) => event.data['n'] as number).sort((a, b) => a - b);
      expect(received).toEqual(expected.sort((a, b) => a - b));
      expect(receiver.deliveries.every((delivery) => delivery.verified)).toBe(true);
    }, 60_000);
  });
}
