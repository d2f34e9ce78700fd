import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../../../test-support/services.js';

const directory = mkdtempSync(join(tmpdir(), 'hearth-wake-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const withRedis = await redisAvailable();

/**
 * With Redis, a node that appends to the event log wakes the others to read it at once (bus/redis-wake.ts).
 * The nodes here poll the log once a minute, so an event can only cross within the test's time if the
 * wake-up arrived: a node whose subscriber never connected would deliver it a minute late.
 */
describe.skipIf(!withRedis)('Redis wake-up between nodes', () => {
  const nodes: TestHearth[] = [];
  let game: TestGame;
  beforeAll(async () => {
    const databaseUrl = `sqlite:${join(directory, 'wake.sqlite')}`;
    const prefix = redisPrefix();
    for (let i = 0; i < 2; i++) {
      nodes.push(
        await startHearth({
          databaseUrl,
          workerId: i,
          redisUrl: REDIS_URL,
          redisPrefix: prefix,
          eventPollMs: 60_000,
        }),
      );
    }
    game = await createGame(nodes[0]!);
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
  });

  it('an event published on one node reaches a session on the other without waiting for a poll', async () => {
    const client = await GatewayClient.connect(nodes[1]!.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({
      op: 2,
      d: {
        token: game.botToken,
        properties: { os: 'linux', browser: 'hearth-test', device: 'hearth-test' },
        intents: 0,
      },
    });
    await client.nextDispatch('READY');
    for (let n = 0; n < 3; n++) {
      await nodes[0]!.bus.publish({ type: 'NODE_EVENT', data: { n }, audience: { applicationId: game.id } });
      const frame = await client.nextDispatch('NODE_EVENT', 10_000);
      expect(frame.d).toEqual({ n });
    }
    client.socket.close(1000);
  }, 30_000);
});
