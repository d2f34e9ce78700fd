import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthProcess, hearthCommand, hearthServe } from '../../../../test-support/cli.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import { startAgent as startAgentCommand } from '../../src/rpc/cli-command.js';
import { agentUser, ipcDir, RawIpcClient, rpcGame, startAgent } from './rpc-support.js';

/** `hearth rpc` as a process: the CLI wiring, and the socket file a killed agent leaves behind. */
describe('hearth rpc', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let dir: ReturnType<typeof ipcDir>;

  beforeAll(async () => {
    hearth = await startHearth();
    game = await rpcGame(hearth);
    dir = ipcDir();
  });
  afterAll(async () => {
    await hearth?.close();
    dir?.remove();
  });

  it('serves discord-ipc-0 of XDG_RUNTIME_DIR; after a SIGKILL the next agent reclaims the stale socket', async () => {
    const user = await agentUser(hearth);
    const agentProcess = new HearthProcess(['rpc', '--server', hearth.url, '--no-websocket'], {
      HEARTH_RPC_TOKEN: user.token,
      XDG_RUNTIME_DIR: dir.path,
    });
    const path = join(dir.path, 'discord-ipc-0');
    try {
      await agentProcess.until((p) => p.stdout.includes('hearth rpc serving'));
      expect(agentProcess.stdout).toBe(`hearth rpc serving ${user.username} on ipc ${path}\n`);
      const client = await RawIpcClient.connect(path);
      client.handshake(game.id);
      expect((await client.next()).data).toMatchObject({ evt: 'READY', data: { user: { id: user.id } } });
      client.close();
    } finally {
      agentProcess.child.kill('SIGKILL');
      await agentProcess.exited;
    }
    // The killed agent could not remove its socket file: nothing listens on it any more.
    expect(existsSync(path)).toBe(true);
    const next = await startAgent(hearth, (await agentUser(hearth)).token, {
      ipc: { directory: dir.path },
      websocket: false,
    });
    try {
      expect(next.ipcPath).toBe(path);
      const client = await RawIpcClient.connect(path);
      client.handshake(game.id);
      expect((await client.next()).data).toMatchObject({ evt: 'READY' });
      client.close();
    } finally {
      await next.close();
    }
  });

  it('refuses to start without a user token, in one line', async () => {
    const refused = new HearthProcess(['rpc', '--server', hearth.url], { XDG_RUNTIME_DIR: dir.path });
    const { code } = await refused.exited;
    expect(code).toBe(1);
    expect(refused.stderr).toBe(
      'hearth: a user token is required: --token or HEARTH_RPC_TOKEN (or --login and --password)\n',
    );
  });

  it('signs in with --login and --password as the platform client does; a wrong password is refused', async () => {
    const user = await agentUser(hearth);
    const agent = await startAgentCommand(hearth.url, {
      login: `${user.username}@example.com`,
      password: 'a long password',
      ipcDir: dir.path,
      websocket: false,
    });
    try {
      expect(agent.user['id']).toBe(user.id);
    } finally {
      await agent.close();
    }
    await expect(
      startAgentCommand(hearth.url, {
        login: `${user.username}@example.com`,
        password: 'wrong password',
        websocket: false,
      }),
    ).rejects.toThrow(/^rpc: sign-in refused: /);
  });

  it('hearth serve --rpc runs an agent beside the server, signed in with --rpc-token', async () => {
    const database = `sqlite:${join(dir.path, 'serve.db')}`;
    const created = JSON.parse(
      await hearthCommand(
        [
          'users',
          'create',
          '--username',
          'servedrpc',
          '--email',
          'served@example.com',
          '--password',
          'a long password',
          '--json',
        ],
        { HEARTH_DATABASE_URL: database },
      ),
    ) as { id: string; token: string };
    const serveDir = join(dir.path, 'serve');
    mkdirSync(serveDir);
    const portBase = String(20_000 + Math.floor(Math.random() * 20_000));
    const { server } = await hearthServe(
      ['--rpc', '--rpc-token', created.token, '--rpc-ipc-dir', serveDir, '--rpc-ws-port-base', portBase],
      { HEARTH_DATABASE_URL: database },
    );
    try {
      await server.until((p) => p.stdout.includes('hearth rpc serving'));
      expect(server.stdout).toContain(
        `hearth rpc serving servedrpc on ipc ${join(serveDir, 'discord-ipc-0')}`,
      );
      const client = await RawIpcClient.connect(join(serveDir, 'discord-ipc-0'));
      client.handshake('123456789012345678');
      // The agent asks the server it runs beside: no such application.
      expect((await client.next()).data).toEqual({ code: 4000, message: 'Invalid Client ID' });
    } finally {
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    }
  });
});
