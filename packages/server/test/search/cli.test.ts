import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '@hearth/server';
import { afterAll, describe, expect, it } from 'vitest';
import { HearthProcess } from '../../../../test-support/cli.js';
import { startHearth } from '../../../../test-support/hearth.js';
import { createRoom, post } from '../channel-messages/support.js';
import { idsOf, searchGuild } from './support.js';

// A spawn compiles the TypeScript sources through tsx: give the test room.
const TIMEOUT = 60_000;
const directory = mkdtempSync(join(tmpdir(), 'hearth-search-cli-'));
const DATABASE_URL = `sqlite:${join(directory, 'h.sqlite')}`;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function run(args: string[]) {
  const running = new HearthProcess(args, { HEARTH_DATABASE_URL: DATABASE_URL });
  const { code } = await running.exited;
  return { code, stdout: running.stdout, stderr: running.stderr };
}

describe('hearth search rebuild (README: Commands)', () => {
  it(
    "drops the guild's index; the server answers 110000 until its batches rebuilt it; an unknown guild fails",
    async () => {
      const clock = new ManualClock();
      const hearth = await startHearth({ databaseUrl: DATABASE_URL }, clock);
      try {
        const room = await createRoom(hearth);
        const { body: sent } = await post(hearth, room.channelId, room.member.token, {
          content: 'runic tablet',
        });
        const rebuilt = await run(['search', 'rebuild', '--guild', room.guild.id, '--json']);
        expect(rebuilt.code).toBe(0);
        expect(JSON.parse(rebuilt.stdout)).toEqual({ guild_id: room.guild.id, status: 'rebuilding' });
        expect(
          await searchGuild(hearth, room.guild.id, room.owner.token, { content: 'runic' }),
        ).toMatchObject({
          status: 202,
          body: { code: 110000, documents_indexed: 0 },
        });
        clock.advance(60_000);
        await hearth.services.searchIndex.runBatches(); // (or the server's own timer ran it first)
        const { status, body } = await searchGuild(hearth, room.guild.id, room.owner.token, {
          content: 'runic',
        });
        expect(status).toBe(200);
        expect(idsOf(body)).toEqual([sent.id]);

        const unknown = await run(['search', 'rebuild', '--guild', '1234567890123456789']);
        expect(unknown.code).not.toBe(0);
        expect(unknown.stderr).toContain('Unknown Guild');
      } finally {
        await hearth.close();
      }
    },
    TIMEOUT,
  );
});
