import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type HearthProcess, hearthCommand, hearthServe } from '../../../../test-support/cli.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

const directory = mkdtempSync(join(tmpdir(), 'hearth-webhooks-'));
const ENV = {
  HEARTH_DATABASE_URL: `sqlite:${join(directory, 'h.sqlite')}`,
  HEARTH_LOG_LEVEL: 'info',
  // The receivers listen on loopback: the development switch of the outbound URL policy.
  HEARTH_ALLOW_LOOPBACK_URLS: 'true',
};
const processes: HearthProcess[] = [];
const receivers: WebhookReceiver[] = [];

afterAll(async () => {
  for (const running of processes) running.child.kill('SIGKILL');
  for (const receiver of receivers) await receiver.close();
  rmSync(directory, { recursive: true, force: true });
});

const json = <T>(text: string) => JSON.parse(text) as T;

interface LogEntry {
  id: string;
  type: string;
  status: string;
  attempts: number;
  tries: { httpStatus: number | null; error: string | null }[];
}

async function log(app: string): Promise<LogEntry[]> {
  const out = await hearthCommand(['webhooks', 'log', '--app', app, '--json'], ENV);
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => json<LogEntry>(line));
}

/**
 * The logs of `apps` once each one's event is no longer pending: a receiver has its answer before the
 * server records it, so a log read at once may still say pending on a busy machine.
 */
async function settledLogs(apps: [string, string]): Promise<[LogEntry[], LogEntry[]]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const logs = await Promise.all([log(apps[0]), log(apps[1])]);
    if (logs.every(([entry]) => entry?.status !== 'pending') || Date.now() > deadline) return logs;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('durable delivery (PROTOCOL.md §F.2): a server killed between the write and the delivery', () => {
  it('after a restart the event is delivered exactly once to a receiver answering 204, and retried at one that fails first', async () => {
    // Server A reads its queue once an hour: only its own commits wake it.
    const a = await hearthServe(['--webhook-poll-ms', '3600000'], ENV);
    processes.push(a.server);
    // One-shot commands, side by side on the same database (WAL).
    const credentials = ['--email', 'buyer@example.com', '--password', 'long password', '--json'];
    const [player, ...apps] = await Promise.all([
      hearthCommand(['users', 'create', '--username', 'buyer', ...credentials], ENV).then((out) =>
        json<{ id: string }>(out),
      ),
      ...['Steady Game', 'Flaky Game'].map(async (name) => {
        const app = json<{ id: string; bot_token: string; public_key: string }>(
          await hearthCommand(['apps', 'create', '--name', name, '--json'], ENV),
        );
        const created = await hearthCommand(
          ['skus', 'create', '--app', app.id, '--name', 'Gem', '--type', 'durable', '--json'],
          ENV,
        );
        return { ...app, sku: json<{ id: string }>(created).id };
      }),
    ]);
    const games: { id: string; bot_token: string; public_key: string; sku: string; port: number }[] = [];
    for (const app of apps as { id: string; bot_token: string; public_key: string; sku: string }[]) {
      // The receiver answers the PING, then goes away until after the crash.
      const receiver = await WebhookReceiver.listen(app.public_key);
      const patched = await fetch(`${a.url}/api/v10/applications/@me`, {
        method: 'PATCH',
        headers: { authorization: `Bot ${app.bot_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          event_webhooks_url: receiver.url,
          event_webhooks_types: ['ENTITLEMENT_CREATE'],
        }),
      });
      expect(patched.status).toBe(200);
      const port = Number(new URL(receiver.url).port);
      await receiver.close();
      games.push({ ...app, port });
    }

    // The writes, acknowledged by server A; its one attempt each finds nobody listening.
    const granted: string[] = [];
    for (const game of games) {
      const response = await fetch(`${a.url}/api/v10/applications/${game.id}/entitlements`, {
        method: 'POST',
        headers: { authorization: `Bot ${game.bot_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sku_id: game.sku, owner_id: player.id, owner_type: 2 }),
      });
      expect(response.status).toBe(200);
      granted.push(((await response.json()) as { id: string }).id);
    }
    await a.server.until((p) => (p.stderr.match(/webhook event retry/g) ?? []).length === 2);
    a.server.child.kill('SIGKILL');
    expect((await a.server.exited).signal).toBe('SIGKILL');

    const [steadyGame, flakyGame] = games as [(typeof games)[number], (typeof games)[number]];
    const steady = await WebhookReceiver.listen(steadyGame.public_key, () => 204, steadyGame.port);
    const flaky = await WebhookReceiver.listen(
      flakyGame.public_key,
      (_d, index) => (index === 0 ? 500 : 204),
      flakyGame.port,
    );
    receivers.push(steady, flaky);

    const b = await hearthServe(['--webhook-poll-ms', '50'], ENV);
    processes.push(b.server);
    const [once] = await steady.untilEvents('ENTITLEMENT_CREATE', 1);
    expect(once?.verified).toBe(true);
    expect(once?.body.event?.data).toMatchObject({ id: granted[0], user_id: player.id, type: 4 });
    const retried = await flaky.untilEvents('ENTITLEMENT_CREATE', 2);
    expect(retried.map((d) => d.answered)).toEqual([500, 204]);
    expect(new Set(retried.map((d) => d.rawBody)).size).toBe(1);

    // Settled as delivered: it can never be sent again on its own.
    const [[steadyLog], [flakyLog]] = await settledLogs([steadyGame.id, flakyGame.id]);
    // Server A's attempts found nobody (one each, or a retry more when the kill came late on a busy
    // machine); after the restart, the answers the receivers gave, and no attempt after the 204.
    const unanswered = (log: LogEntry | undefined, answered: (number | null)[]) => {
      const statuses = log?.tries.map((t) => t.httpStatus) ?? [];
      const before = statuses.slice(0, statuses.length - answered.length);
      expect(before.length).toBeGreaterThanOrEqual(1);
      expect(before.every((status) => status === null)).toBe(true);
      expect(statuses.slice(before.length)).toEqual(answered);
      expect(log?.attempts).toBe(statuses.length);
    };
    expect(steadyLog).toMatchObject({
      id: expect.any(String),
      type: 'ENTITLEMENT_CREATE',
      status: 'delivered',
    });
    unanswered(steadyLog, [204]);
    expect(flakyLog).toMatchObject({ status: 'delivered' });
    unanswered(flakyLog, [500, 204]);
    expect(steady.events).toHaveLength(1);

    // The operator replays it: one more delivery, on purpose.
    const replayed = await hearthCommand(
      ['webhooks', 'replay', '--app', steadyGame.id, '--event', steadyLog!.id, '--json'],
      ENV,
    );
    expect(json(replayed)).toEqual({ queued: '1' });
    await steady.untilEvents('ENTITLEMENT_CREATE', 2);
    expect(steady.events).toHaveLength(2);
    const text = await hearthCommand(['webhooks', 'log', '--app', steadyGame.id], ENV);
    expect(text).toMatch(
      new RegExp(`^${steadyLog!.id} \\S+ ENTITLEMENT_CREATE (pending|delivered) attempts=`),
    );

    b.server.child.kill('SIGTERM');
    expect((await b.server.exited).code).toBe(0);
  }, 180_000);

  it('refuses a bad --limit and an unknown event with one line, exit 1', async () => {
    await Promise.all([
      expect(hearthCommand(['webhooks', 'log', '--app', '1', '--limit', '0'], ENV)).rejects.toThrow(
        /--limit must be an integer from 1 to 1000/,
      ),
      expect(hearthCommand(['webhooks', 'replay', '--app', '1', '--event', '2'], ENV)).rejects.toThrow(
        /no finished event 2 of that application/,
      ),
      expect(
        hearthCommand(['entitlements', 'purchase', '--app', '1', '--user', '2', '--sku', '3'], ENV),
      ).rejects.toThrow(/Unknown SKU/),
      expect(
        hearthCommand(['subscriptions', 'renew', '--id', '5', '--period-days', 'x'], ENV),
      ).rejects.toThrow(/--period-days must be a number/),
    ]);
  }, 60_000);
});
