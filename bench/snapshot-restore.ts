import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHearth, testConfig } from '@hearth/server';
import type { Benchmark, Figures, Result } from './benchmark.js';
import { scratchDir } from './lib/scratch.js';

const ROUNDS = 5;
const RESTORES_PER_ROUND = 10;
const MESSAGES = 50;

/**
 * Emulator mode's snapshot restore (README "Snapshots"): a small fixture (an application, a guild with
 * channels and a bot, users, friends, a subscription, 50 messages) saved once, then restored in place into
 * the running server, beside a bare copy of the same SQLite file — what a test suite would do between tests
 * without the emulator (and with a restart). Milliseconds per restore; the target is under 200 ms.
 */
const snapshotRestore: Benchmark = {
  name: 'snapshot-restore',
  description: 'emulator snapshot restore of a small fixture vs a bare SQLite file copy',
  timeoutSeconds: 180,
  async run(): Promise<Result> {
    const dir = scratchDir('hearth-bench-snapshot-');
    const hearth = await createHearth({
      config: testConfig({
        databaseUrl: `sqlite:${join(dir.path, 'bench.sqlite')}`,
        dataDir: dir.path,
        emulator: true,
        logLevel: 'silent',
      }),
      deliverWebhooks: false,
    });
    try {
      const emulator = hearth.emulator;
      if (!emulator) throw new Error('emulator mode did not start');
      const seeded = await emulator.seed({
        applications: { game: { name: 'Bench Game' } },
        users: Object.fromEntries(
          ['alice', 'bob', 'carol', 'dave'].map((name) => [name, { username: name }]),
        ),
        guilds: {
          home: {
            name: 'Home',
            owner: 'alice',
            members: ['bob', 'carol', 'dave'],
            channels: { general: { name: 'general' }, voice: { name: 'Voice', type: 2 } },
            bots: [{ application: 'game' }],
          },
        },
        friendships: [['alice', 'bob']],
        skus: { pass: { application: 'game', name: 'Pass', type: 'subscription' } },
        entitlements: { pass: { sku: 'pass', user: 'alice' } },
      });
      for (let i = 0; i < MESSAGES; i++) {
        await emulator.actions.run('send_message', {
          user_id: seeded.users['alice']?.id,
          channel_id: seeded.guilds['home']?.channels['general'],
          content: `message ${i}`,
        });
      }
      await emulator.saveSnapshot('bench');
      const file = join(dir.path, 'snapshots', 'bench.sqlite');
      const copyTarget = join(dir.path, 'copy.sqlite');
      const time = async (work: () => unknown) => {
        const started = performance.now();
        await work();
        return performance.now() - started;
      };
      const hearthRounds: number[] = [];
      const copyRounds: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const restores: number[] = [];
        const copies: number[] = [];
        for (let i = 0; i < RESTORES_PER_ROUND; i++) {
          restores.push(await time(() => emulator.restoreSnapshot('bench')));
          copies.push(await time(() => copyFileSync(file, copyTarget)));
        }
        hearthRounds.push(median(restores));
        copyRounds.push(median(copies));
      }
      const figures = (label: string, rounds: number[]): Figures => ({
        label,
        throughput: median(rounds),
        rounds,
      });
      const hearthFigures = figures('Hearth snapshot restore (in place, server running)', hearthRounds);
      const copyFigures = figures('bare SQLite file copy', copyRounds);
      return {
        unit: 'ms per restore',
        baseline: copyFigures,
        hearth: hearthFigures,
        ratio: hearthFigures.throughput / copyFigures.throughput,
        lowerIsBetter: true,
        notes: [
          `fixture: 4 users, 1 guild, 2 channels, 1 bot, 1 subscription, ${MESSAGES} messages`,
          `${ROUNDS} rounds of ${RESTORES_PER_ROUND} restores; target under 200 ms: ${
            hearthFigures.throughput < 200 ? 'met' : 'missed'
          }`,
        ],
      };
    } finally {
      await hearth.close();
      dir.remove();
    }
  },
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export default snapshotRestore;
