import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/hearth.js', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'hearth-provisional-cli-'));
const DATABASE_URL = `sqlite:${join(directory, 'h.sqlite')}`;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** One `hearth …` command on the suite's database, without the parent's HEARTH_* variables. */
function hearth(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('HEARTH_')));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...env, HEARTH_DATABASE_URL: DATABASE_URL, HEARTH_LOG_LEVEL: 'warn' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

async function json(args: string[]): Promise<Record<string, string>> {
  const result = await hearth([...args, '--json']);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Record<string, string>;
}

describe('operator commands of provisional accounts (README: Commands)', () => {
  it('apps providers add|list|remove validate and manage providers; users ban|unban', async () => {
    const app = await json(['apps', 'create', '--name', 'CLI Game']);
    const id = app['id']!;
    await json(['apps', 'update', '--id', id, '--approve', 'ProvisionalAccountsEnabled']);

    const steam = await json([
      'apps',
      'providers',
      'add',
      '--id',
      id,
      '--type',
      'STEAM_SESSION_TICKET',
      '--verification-url',
      'https://verify.example.com/steam',
    ]);
    expect(steam).toMatchObject({
      type: 'STEAM_SESSION_TICKET',
      verification_url: 'https://verify.example.com/steam',
    });
    const listed = await hearth(['apps', 'providers', 'list', '--id', id, '--json']);
    expect(JSON.parse(listed.stdout)).toEqual(steam);

    const refused = await hearth([
      'apps',
      'providers',
      'add',
      '--id',
      id,
      '--type',
      'OIDC',
      '--issuer',
      'https://issuer.local',
      '--client-id',
      id,
    ]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe('hearth: OIDC configuration not found\n');

    const removed = await hearth(['apps', 'providers', 'remove', '--id', id, '--provider', steam['id']!]);
    expect(removed).toEqual({ code: 0, stdout: 'removed\n', stderr: '' });

    const user = await json([
      'users',
      'create',
      '--username',
      'cli.banned',
      '--email',
      'cli.banned@example.com',
      '--password',
      'long password',
    ]);
    const banned = await json(['users', 'ban', '--id', user['id']!, '--duration', '60', '--reason', 'spam']);
    expect(banned['user_id']).toBe(user['id']);
    expect(Number.isNaN(Date.parse(banned['expires_at'] ?? ''))).toBe(false);
    expect(await hearth(['users', 'unban', '--id', user['id']!])).toEqual({
      code: 0,
      stdout: 'unbanned\n',
      stderr: '',
    });
    const again = await hearth(['users', 'unban', '--id', user['id']!]);
    expect(again).toMatchObject({ code: 1, stderr: 'hearth: Unknown User\n' });
    const permanent = await json(['users', 'ban', '--id', user['id']!]);
    expect(permanent['expires_at']).toBe('never');
    const badDuration = await hearth(['users', 'ban', '--id', user['id']!, '--duration', 'soon']);
    expect(badDuration.code).toBe(1);
    expect(badDuration.stderr).toContain('duration_seconds');
  }, 120_000);
});
