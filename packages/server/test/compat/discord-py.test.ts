import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GatewayCloseCodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { DISCORD_PY_PYTHON, discordPyAvailable } from '../../../../test-support/services.js';

/**
 * discord.py 2.2 from the OS package (python3-discord) as a bot against in-process Hearth (issue 23): it logs
 * in, reaches on_ready, resumes after the server closes its socket with a resumable code (RESUMED with
 * `d: {}`), and retries after a 429 (which it accepts only with `Via` and an exact JSON content type).
 */

const SCRIPT = fileURLToPath(new URL('./discord_py_bot.py', import.meta.url));
/** An epoch-aligned second, so the one-second global windows start with the test. */
const T0 = Date.parse('2026-03-02T12:00:00Z');
/** Requests per second per identity: login and GET /gateway/bot fit, six concurrent requests do not. */
const GLOBAL_PER_SECOND = 5;
const CONCURRENT_REQUESTS = 6;

interface Milestone {
  event: string;
  [key: string]: unknown;
}

const available = discordPyAvailable();

describe.skipIf(!available)('discord.py (python3-discord) against Hearth', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let clock: ManualClock;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    // A clock that moves only when told: the rate-limit window that refused discord.py opens again only
    // after the test has seen the 429, so the retry is certain and nothing depends on how fast this runs.
    clock = new ManualClock(T0);
    hearth = await startHearth({ rateLimitGlobal: GLOBAL_PER_SECOND }, clock);
    game = await createGame(hearth, { name: 'discord.py game' });
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await hearth.close();
  });

  it('logs in, reaches on_ready, resumes after a server-side 4000 close, and retries after a 429', async () => {
    const milestones: Milestone[] = [];
    let stderr = '';
    const running = spawn(DISCORD_PY_PYTHON, [SCRIPT], {
      env: {
        PATH: process.env['PATH'] ?? '',
        HEARTH_URL: hearth.url,
        HEARTH_BOT_TOKEN: game.botToken,
        HEARTH_CONCURRENT_REQUESTS: String(CONCURRENT_REQUESTS),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = running;
    let pending = '';
    running.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) milestones.push(JSON.parse(line) as Milestone);
    });
    running.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => running.once('exit', resolve));

    /** Polls until `event` has been printed; fails with discord.py's stderr if it exits first. */
    async function milestone(event: string, whileWaiting?: () => void): Promise<Milestone> {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const found = milestones.find((m) => m.event === event);
        if (found) return found;
        if (running.exitCode !== null || Date.now() > deadline) {
          throw new Error(`discord.py did not reach ${event} (exit ${running.exitCode}):\n${stderr}`);
        }
        whileWaiting?.();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    const ready = await milestone('ready');
    expect(ready).toEqual({ event: 'ready', user_id: game.botUserId, application_id: game.id });

    const session = [...hearth.gateway.registry.all()].find((s) => s.identity.applicationId === game.id);
    expect(session?.attached).toBeDefined();
    session!.attached!.close(GatewayCloseCodes.UnknownError, 'test: resume please');
    await milestone('resumed');

    // Every 429 Hearth answers opens the next window, once; discord.py sleeps retry_after and retries.
    let windowsOpened = 0;
    const limited = () => hearth.logs.filter((line) => /"status":429/.test(line));
    const info = await milestone('application_info', () => {
      if (limited().length > windowsOpened) {
        windowsOpened = limited().length;
        clock.advance(1000);
      }
    });
    expect(info).toEqual({
      event: 'application_info',
      ids: [game.id],
      owner_ids: [game.ownerId],
      answered: CONCURRENT_REQUESTS,
      rate_limited: expect.any(Number),
    });
    expect(info['rate_limited']).toBeGreaterThanOrEqual(1);
    expect(limited().length).toBe(info['rate_limited']);
    expect(limited().every((line) => line.includes('/api/v10/oauth2/applications/@me'))).toBe(true);

    expect(await exited).toBe(0);
  }, 60_000);
});
