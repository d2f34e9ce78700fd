import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type EmulatorHearth, startEmulator } from './support.js';

const BIN = fileURLToPath(new URL('../../bin/hearth.js', import.meta.url));
const exec = promisify(execFile);
let dir: string;
let hearth: EmulatorHearth;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-emulator-cli-'));
  hearth = await startEmulator();
});
afterAll(async () => {
  await hearth.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `hearth …`; answers exit code and output (a failing command does not throw). */
async function hearthCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env['PATH'] ?? '', HEARTH_LOG_LEVEL: 'silent' };
  try {
    const { stdout, stderr } = await exec(process.execPath, [BIN, ...args], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const FIXTURE_YAML = `
applications:
  game:
    name: CLI Game
users:
  alice:
    username: alice
guilds:
  home:
    name: Home
    owner: alice
    channels:
      general: { name: general }
`;

// Every spawn compiles the TypeScript sources through tsx, on a machine shared by many: give each test room.
describe('README, Emulator mode: the commands', { timeout: 240_000 }, () => {
  it('hearth seed --file seeds a database from YAML once, printing ids and tokens as JSON', async () => {
    const file = join(dir, 'fixtures.yaml');
    await writeFile(file, FIXTURE_YAML);
    const database = `sqlite:${join(dir, 'seeded.sqlite')}`;
    const first = await hearthCli(['seed', '--file', file, '--database', database]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const printed = JSON.parse(first.stdout) as {
      applications: { game: { id: string; bot_token: string } };
      guilds: { home: { channels: { general: string } } };
    };
    expect(printed.applications.game.bot_token).toEqual(expect.any(String));
    expect(printed.guilds.home.channels.general).toMatch(/^\d+$/);
    const second = await hearthCli(['seed', '--file', file, '--database', database]);
    expect(JSON.parse(second.stdout)).toEqual(printed);
  });

  it('hearth seed names the bad field of a bad file', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'guilds:\n  g:\n    name: G\n    owner: nobody\n');
    const result = await hearthCli([
      'seed',
      '--file',
      file,
      '--database',
      `sqlite:${join(dir, 'bad.sqlite')}`,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'hearth: Invalid Form Body (guilds.g.owner: no user named "nobody" in the fixture)\n',
    );
  });

  it('hearth emulator clock and fault drive a running server; a wrong token is refused', async () => {
    const remote = ['--server', hearth.url, '--admin-token', ADMIN_TOKEN];
    const clock = await hearthCli(['emulator', 'clock', '--advance', '1d', '--freeze', ...remote]);
    expect(clock.code).toBe(0);
    expect(JSON.parse(clock.stdout)).toMatchObject({ frozen: true });

    const rule = JSON.stringify({ target: 'http', path: '/gateway', action: 'error', status: 503 });
    expect((await hearthCli(['emulator', 'fault', 'add', rule, ...remote])).code).toBe(0);
    const listed = JSON.parse(
      (await hearthCli(['emulator', 'fault', 'list', ...remote])).stdout,
    ) as unknown[];
    expect(listed).toEqual([expect.objectContaining({ action: 'error', status: 503, remaining: 1 })]);
    expect((await hearthCli(['emulator', 'fault', 'clear', ...remote])).code).toBe(0);

    expect((await hearthCli(['emulator', 'snapshot', 'save', 'base', ...remote])).code).toBe(0);
    const snapshots = JSON.parse((await hearthCli(['emulator', 'snapshot', 'list', ...remote])).stdout);
    expect(snapshots).toEqual([{ name: 'base', created_at: expect.any(String) }]);

    const actions = JSON.parse((await hearthCli(['emulator', 'act', ...remote])).stdout) as {
      name: string;
    }[];
    expect(actions.map((a) => a.name)).toContain('send_message');

    const refused = await hearthCli(['emulator', 'clock', '--server', hearth.url, '--admin-token', 'wrong']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('GET /_hearth/clock: 401');
  });
});
