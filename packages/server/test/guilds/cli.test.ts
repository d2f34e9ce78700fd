import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthProcess } from '../../../../test-support/cli.js';
import { startHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer } from '../../../../test-support/oauth.js';

// Every spawn compiles the TypeScript sources through tsx: give each test room.
const TIMEOUT = 60_000;
const directory = mkdtempSync(join(tmpdir(), 'hearth-guilds-cli-'));
const DATABASE_URL = `sqlite:${join(directory, 'h.sqlite')}`;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function run(args: string[]) {
  const running = new HearthProcess(args, { HEARTH_DATABASE_URL: DATABASE_URL });
  const { code } = await running.exited;
  return { code, stdout: running.stdout, stderr: running.stderr };
}

/** Fixtures written in-process on the suite's database, then the process closes it for the CLI. */
let owner: { id: string };
let joiner: { id: string };
let game: { id: string; botUserId: string };
let guildId: string;
beforeAll(async () => {
  const hearth = await startHearth({ databaseUrl: DATABASE_URL });
  owner = (await createPlayer(hearth)).user;
  joiner = (await createPlayer(hearth)).user;
  game = await createGame(hearth, { name: 'Ops Bot' });
  guildId = (await hearth.services.guilds.createGuild(owner.id, { name: 'Ops Hall' })).id;
  await hearth.close();
}, TIMEOUT);

describe('hearth guilds list|show|add-member|install-bot (README: Commands)', () => {
  it(
    'add-member and install-bot change the guild; list and show print it as JSON',
    async () => {
      const added = await run(['guilds', 'add-member', '--id', guildId, '--user', joiner.id, '--json']);
      expect(added.code).toBe(0);
      expect(JSON.parse(added.stdout)).toEqual({ guild_id: guildId, user_id: joiner.id, added: 'true' });

      const permissions = PermissionFlags.SendMessages.toString();
      const installed = await run([
        'guilds',
        'install-bot',
        '--id',
        guildId,
        '--app',
        game.id,
        '--permissions',
        permissions,
        '--json',
      ]);
      expect(installed.code).toBe(0);
      expect(JSON.parse(installed.stdout)).toEqual({
        guild_id: guildId,
        application_id: game.id,
        added: 'true',
        role_id: expect.stringMatching(/^\d+$/),
        permissions,
      });

      const listed = await run(['guilds', 'list', '--json']);
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual({
        id: guildId,
        name: 'Ops Hall',
        owner_id: owner.id,
        member_count: '3',
      });

      const shown = await run(['guilds', 'show', '--id', guildId, '--json']);
      expect(shown.code).toBe(0);
      const guild = JSON.parse(shown.stdout) as Record<string, unknown>;
      expect(guild).toMatchObject({ id: guildId, name: 'Ops Hall', member_count: 3, channels: [] });
      expect(guild['roles']).toEqual([
        expect.objectContaining({ id: guildId, name: '@everyone' }),
        expect.objectContaining({
          name: 'Ops Bot',
          managed: true,
          tags: { bot_id: game.botUserId },
          permissions,
        }),
      ]);
    },
    TIMEOUT * 4,
  );

  it(
    'an unknown guild or a bad --permissions is told in one line, exit 1',
    async () => {
      const unknown = await run(['guilds', 'show', '--id', '123456789012345678']);
      expect(unknown).toMatchObject({ code: 1, stdout: '' });
      expect(unknown.stderr).toBe('hearth: Unknown Guild\n');
      const bad = await run([
        'guilds',
        'install-bot',
        '--id',
        guildId,
        '--app',
        game.id,
        '--permissions',
        'x',
      ]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toBe('hearth: --permissions: a decimal bitset is expected\n');
    },
    TIMEOUT * 2,
  );
});
