import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type HearthProcess, hearthCommand, hearthServe } from '../../../../test-support/cli.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

/**
 * Failure tests (issue 21), loopback only and bounded: `kill -9` of a `hearth serve` process during
 * concurrent writes, then every acknowledged write is present after a restart (SQLite and PostgreSQL, a
 * fresh database per trial); a webhook receiver that fails then recovers, and a server killed
 * mid-delivery, then every event reaches the healthy receiver (once per id). Figures go to the output.
 */

const directory = mkdtempSync(join(tmpdir(), 'hearth-failure-'));
const processes: HearthProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const running of processes) running.child.kill('SIGKILL');
  for (const cleanup of cleanups) await cleanup();
  rmSync(directory, { recursive: true, force: true });
});

const TRIALS = 1;
const WRITERS = 4;
/** Acknowledged writes before the kill; the writers keep going, so some are in flight when it lands. */
const KILL_AFTER = 40;

const postgresUp = await postgresAvailable();

type Env = Record<string, string>;
const json = <T>(text: string) => JSON.parse(text) as T;

function envOf(databaseUrl: string): Env {
  return {
    HEARTH_DATABASE_URL: databaseUrl,
    HEARTH_LOG_LEVEL: 'info',
    HEARTH_RATE_LIMIT_GLOBAL: '1000000',
    HEARTH_ALLOW_LOOPBACK_URLS: 'true',
  };
}

interface Game {
  id: string;
  bot_token: string;
  public_key: string;
  sku: string;
  player: string;
}

/** An application with a SKU and a player, made by one-shot commands on the same database. */
async function game(env: Env, name: string): Promise<Game> {
  const tag = name.toLowerCase();
  // One-shot commands side by side on the same database: the user beside the application and its SKU.
  const [player, app] = await Promise.all([
    hearthCommand(
      [
        'users',
        'create',
        '--username',
        `p${tag}`,
        '--email',
        `p${tag}@example.com`,
        '--password',
        'long password',
        '--json',
      ],
      env,
    ).then((out) => json<{ id: string }>(out)),
    hearthCommand(['apps', 'create', '--name', `Crash ${tag}`, '--json'], env).then((out) =>
      json<{ id: string; bot_token: string; public_key: string }>(out),
    ),
  ]);
  const sku = json<{ id: string }>(
    await hearthCommand(
      ['skus', 'create', '--app', app.id, '--name', 'Gem', '--type', 'consumable', '--json'],
      env,
    ),
  );
  return { ...app, sku: sku.id, player: player.id };
}

function grant(url: string, g: Game): Promise<Response> {
  return fetch(`${url}/api/v10/applications/${g.id}/entitlements`, {
    method: 'POST',
    headers: { authorization: `Bot ${g.bot_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sku_id: g.sku, owner_id: g.player, owner_type: 2 }),
  });
}

async function killed(server: HearthProcess): Promise<void> {
  server.child.kill('SIGKILL');
  expect((await server.exited).signal).toBe('SIGKILL');
}

const engines = [
  {
    name: 'SQLite',
    available: true,
    fresh: (trial: number) => `sqlite:${join(directory, `writes-${trial}.sqlite`)}`,
  },
  {
    name: 'PostgreSQL',
    available: postgresUp,
    fresh: () => {
      const schema = postgresSchema();
      cleanups.push(schema.drop);
      return schema.url;
    },
  },
];

for (const engine of engines) {
  describe.skipIf(!engine.available)(`kill -9 during concurrent writes on ${engine.name}`, () => {
    it(`every acknowledged write is present after a restart (${TRIALS} trials)`, async () => {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const env = envOf(engine.fresh(trial));
        const g = await game(env, `${engine.name}${trial}`);
        const a = await hearthServe([], env);
        processes.push(a.server);
        const acknowledged: string[] = [];
        let inFlightErrors = 0;
        let reachedKill!: () => void;
        const enough = new Promise<void>((resolve) => {
          reachedKill = resolve;
        });
        let stop = false;
        const writers = Array.from({ length: WRITERS }, async () => {
          while (!stop) {
            try {
              const response = await grant(a.url, g);
              if (response.status !== 200) throw new Error(`answered ${response.status}`);
              acknowledged.push(((await response.json()) as { id: string }).id);
              if (acknowledged.length >= KILL_AFTER) reachedKill();
            } catch {
              // The connection died with the server: not acknowledged, so not owed.
              inFlightErrors++;
              stop = true;
            }
          }
        });
        await enough;
        await killed(a.server);
        stop = true;
        await Promise.all(writers);

        const b = await hearthServe([], env);
        processes.push(b.server);
        let present = 0;
        for (const id of acknowledged) {
          const response = await fetch(`${b.url}/api/v10/applications/${g.id}/entitlements/${id}`, {
            headers: { authorization: `Bot ${g.bot_token}` },
          });
          if (response.status === 200) present++;
        }
        const lost = acknowledged.length - present;
        console.log(
          `crash ${engine.name} trial ${trial}: writes acknowledged ${acknowledged.length}, lost ${lost} ` +
            `(requests cut by the kill: ${inFlightErrors})`,
        );
        expect(lost).toBe(0);
        b.server.child.kill('SIGTERM');
        await b.server.exited;
      }
    }, 240_000);
  });
}

describe('webhook events survive a failing receiver and a server killed mid-delivery', () => {
  it('every event reaches the healthy receiver, once per id', async () => {
    const EVENTS = 12;
    const env = envOf(`sqlite:${join(directory, 'webhooks.sqlite')}`);
    const g = await game(env, 'hooks');
    let healthy = false;
    // PINGs pass (the URL must be verified); events fail until the receiver recovers.
    const receiver = await WebhookReceiver.listen(g.public_key, (d) =>
      d.body.type === 0 || healthy ? 204 : 500,
    );
    cleanups.push(() => receiver.close());
    const a = await hearthServe(['--webhook-poll-ms', '50'], env);
    processes.push(a.server);
    const patched = await fetch(`${a.url}/api/v10/applications/@me`, {
      method: 'PATCH',
      headers: { authorization: `Bot ${g.bot_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        event_webhooks_url: receiver.url,
        event_webhooks_types: ['ENTITLEMENT_CREATE'],
      }),
    });
    expect(patched.status).toBe(200);

    const sent: string[] = [];
    await Promise.all(
      Array.from({ length: 3 }, async () => {
        while (sent.length < EVENTS) {
          const response = await grant(a.url, g);
          expect(response.status).toBe(200);
          sent.push(((await response.json()) as { id: string }).id);
        }
      }),
    );
    const idOf = (d: { body: { event?: { data: Record<string, unknown> } } }) =>
      String(d.body.event?.data['id']);
    const delivered = () =>
      new Set(receiver.deliveries.filter((d) => d.body.event && d.answered === 204).map(idOf));
    // The receiver fails every event once at least, then recovers; the server dies while it delivers.
    await receiver.until((all) => all.filter((d) => d.body.event).length >= EVENTS);
    const failed = receiver.deliveries.filter((d) => d.body.event && d.answered === 500).length;
    healthy = true;
    await receiver.until(() => delivered().size >= 1);
    await killed(a.server);

    const b = await hearthServe(['--webhook-poll-ms', '50'], env);
    processes.push(b.server);
    await receiver.until(() => sent.every((id) => delivered().has(id)));
    const accepted = receiver.deliveries.filter((d) => d.body.event && d.answered === 204);
    const missed = sent.filter((id) => !delivered().has(id)).length;
    console.log(
      `webhooks: events sent ${sent.length}, missed ${missed}; failed answers ${failed}; accepted deliveries ` +
        `${accepted.length}, of which redelivered after the kill ${accepted.length - delivered().size} ` +
        '(sent by the killed server, unsettled: at-least-once, the receiver keeps one per id)',
    );
    expect(missed).toBe(0);
    expect(accepted.every((d) => d.verified)).toBe(true);
    expect(new Set(accepted.map(idOf))).toEqual(new Set(sent));
    b.server.child.kill('SIGTERM');
    await b.server.exited;
  }, 180_000);
});
