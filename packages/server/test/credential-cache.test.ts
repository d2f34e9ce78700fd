import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { call, type LobbyPlayer, lobbyGame, lobbyPlayers } from '../../../test-support/lobbies.js';
import { createGame, grantTokens } from '../../../test-support/oauth.js';
import { POSTGRES_URL, postgresAvailable, postgresSchema } from '../../../test-support/services.js';

/**
 * The credential lookup of every authenticated request (a session, a bot token, a Bearer token) is answered
 * from memory until the next commit (storage/read-cache.ts, storage/change-stamp.ts). Whoever changes a
 * credential or what it stands for, this server or another process on the same database, the very next
 * request sees it. A lobby message commits too, but only tables no credential lookup reads: the answers
 * are kept across it. (Expiry, logout, password changes and bans through this server: sessions.test.ts; an
 * approval revoked through this server: applications.test.ts.)
 */

const BIN = fileURLToPath(new URL('../bin/hearth.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const UNAUTHORIZED = { code: 0, message: '401: Unauthorized' };
const ADMIN_TOKEN = 'credential-cache-admin';
const withPostgres = await postgresAvailable();

/** A CLI command in a process of its own, as an operator runs it beside the server. */
async function cli(databaseUrl: string, args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('HEARTH_')) env[key] = value;
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...env, HEARTH_DATABASE_URL: databaseUrl },
    timeout: 60_000,
  });
  return stdout;
}

let counter = 0;

async function register(hearth: TestHearth): Promise<{ token: string; userId: string }> {
  const name = `cache${++counter}`;
  const response = await hearth.api('/auth/register', {
    method: 'POST',
    body: { username: name, email: `${name}@example.com`, password: 'first password' },
  });
  expect(response.status).toBe(201);
  const { token, user_id } = (await response.json()) as { token: string; user_id: string };
  return { token, userId: user_id };
}

/** Another connection to the same SQLite file, as another process or the CLI holds one. */
async function writeAside(path: string, statement: string, ...parameters: string[]): Promise<void> {
  const SQLite = (await import('better-sqlite3')).default;
  const connection = new SQLite(path);
  try {
    connection.pragma('busy_timeout = 5000');
    expect(connection.prepare(statement).run(...parameters).changes).toBeGreaterThan(0);
  } finally {
    connection.close();
  }
}

async function me(hearth: TestHearth, token: string): Promise<{ status: number; body: unknown }> {
  const response = await hearth.api('/users/@me', { auth: token });
  return { status: response.status, body: await response.json() };
}

describe('on a SQLite file, changed by the CLI in another process', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-session-cache-'));
  const file = join(directory, 'hearth.sqlite');
  const databaseUrl = `sqlite:${file}`;
  let hearth: TestHearth;

  beforeAll(async () => {
    hearth = await startHearth({ databaseUrl, adminToken: ADMIN_TOKEN });
  });
  afterAll(async () => {
    await hearth.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('a subscription set by `hearth users update` shows in the very next GET /users/@me', async () => {
    const { token, userId } = await register(hearth);
    // Asked twice: the second answer comes from memory.
    expect(await me(hearth, token)).toMatchObject({ status: 200, body: { id: userId, premium_type: 0 } });
    expect(await me(hearth, token)).toMatchObject({ status: 200, body: { id: userId, premium_type: 0 } });
    await cli(databaseUrl, ['users', 'update', '--id', userId, '--premium-type', '2']);
    expect(await me(hearth, token)).toMatchObject({ status: 200, body: { id: userId, premium_type: 2 } });
  }, 90_000);

  it('a ban by `hearth users ban` refuses the very next request', async () => {
    const { token, userId } = await register(hearth);
    expect((await me(hearth, token)).status).toBe(200);
    expect((await me(hearth, token)).status).toBe(200);
    await cli(databaseUrl, ['users', 'ban', '--id', userId]);
    expect(await me(hearth, token)).toEqual({ status: 401, body: UNAUTHORIZED });
  }, 90_000);

  it('a session deleted by another connection is refused at once; others stay answered', async () => {
    const { token, userId } = await register(hearth);
    const other = await register(hearth);
    expect((await me(hearth, token)).status).toBe(200);
    expect((await me(hearth, other.token)).status).toBe(200);
    await writeAside(file, 'DELETE FROM sessions WHERE user_id = ?', userId);
    expect(await me(hearth, token)).toEqual({ status: 401, body: UNAUTHORIZED });
    expect((await me(hearth, other.token)).status).toBe(200);
  });

  it('a bot token replaced by another process is refused at once', async () => {
    const game = await createGame(hearth);
    const bot = `Bot ${game.botToken}`;
    expect(await me(hearth, bot)).toMatchObject({ status: 200, body: { id: game.botUserId, bot: true } });
    expect((await me(hearth, bot)).status).toBe(200);
    await writeAside(file, "UPDATE applications SET bot_token_hash = 'replaced' WHERE id = ?", game.id);
    expect(await me(hearth, bot)).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it('a Bearer token: an approval withdrawn by `hearth apps update --revoke` applies to the very next request, a deleted token refuses it', async () => {
    const game = await createGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['IdentifyPremiumApproved'] });
    const subscriber = await register(hearth);
    await hearth.services.accounts.setPremiumType(subscriber.userId, 2);
    const tokens = await grantTokens(hearth, game, subscriber.token, 'identify identify.premium');
    const bearer = `Bearer ${tokens.access_token}`;
    expect(await me(hearth, bearer)).toMatchObject({ status: 200, body: { premium_type: 2 } });
    expect(await me(hearth, bearer)).toMatchObject({ status: 200, body: { premium_type: 2 } });
    await cli(databaseUrl, ['apps', 'update', '--id', game.id, '--revoke', 'IdentifyPremiumApproved']);
    expect(await me(hearth, bearer)).toMatchObject({ status: 200, body: { premium_type: 0 } });
    await writeAside(file, 'DELETE FROM oauth_tokens WHERE application_id = ?', game.id);
    expect(await me(hearth, bearer)).toEqual({ status: 401, body: UNAUTHORIZED });
  }, 90_000);
  /** Two players of an approved game chatting in one lobby, each with a Bearer token. */
  async function lobbyChat() {
    const game = await lobbyGame(hearth);
    const [alice, bob] = await lobbyPlayers(hearth, game, 2);
    const lobby = await call<{ id: string }>(hearth, 'PUT', '/lobbies', alice.bearer, {
      secret: `s${++counter}`,
    });
    expect(lobby.status).toBe(200);
    const joined = await call(hearth, 'PUT', '/lobbies', bob.bearer, { secret: `s${counter}` });
    expect(joined.status).toBe(200);
    const send = async (player: LobbyPlayer) =>
      (await call(hearth, 'POST', `/lobbies/${lobby.body.id}/messages`, player.bearer, { content: 'gg' }))
        .status;
    return { alice, bob, send };
  }

  it('lobby messages keep the credential answers; a token deleted by another connection between two is refused', async () => {
    const { alice, bob, send } = await lobbyChat();
    expect(await send(alice)).toBe(201);
    const kept = hearth.storage.changeStamps();
    expect(kept).toBeDefined();
    for (const player of [bob, alice, bob]) expect(await send(player)).toBe(201);
    expect(hearth.storage.changeStamps()).toBe(kept);
    // Right after this server's own commit (a message), another connection's is seen all the same.
    await writeAside(file, 'DELETE FROM oauth_tokens WHERE user_id = ?', bob.id);
    expect(await send(bob)).toBe(401);
    expect(await send(alice)).toBe(201);
  });

  it('a token revoked, a session ended or an account banned through this server between lobby messages is refused at once', async () => {
    const { alice, bob, send } = await lobbyChat();
    expect(await send(alice)).toBe(201);
    expect(await send(bob)).toBe(201);
    expect((await bob.revoke()).status).toBe(200);
    expect(await send(bob)).toBe(401);
    expect(await send(alice)).toBe(201);
    expect((await me(hearth, alice.account.token)).status).toBe(200);
    expect(await send(alice)).toBe(201);
    const out = await hearth.api('/auth/logout', { method: 'POST', auth: alice.account.token });
    expect(out.status).toBe(204);
    expect(await send(alice)).toBe(201);
    expect(await me(hearth, alice.account.token)).toEqual({ status: 401, body: UNAUTHORIZED });
    expect((await me(hearth, bob.account.token)).status).toBe(200);
    expect((await me(hearth, bob.account.token)).status).toBe(200);
    const banned = await hearth.api(`/admin/users/${bob.id}/ban`, {
      method: 'PUT',
      headers: { authorization: `Admin ${ADMIN_TOKEN}` },
      body: {},
    });
    expect(banned.status).toBeLessThan(300);
    expect(await send(alice)).toBe(201);
    expect(await me(hearth, bob.account.token)).toEqual({ status: 401, body: UNAUTHORIZED });
  });
});

describe('in memory, changed through this server', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  it('a changed profile shows in the next GET, and the answer a request got is never changed under it', async () => {
    const { token } = await register(hearth);
    const before = await me(hearth, token);
    expect(before).toMatchObject({ status: 200, body: { global_name: null } });
    const patched = await hearth.api('/users/@me', {
      method: 'PATCH',
      auth: token,
      body: { global_name: 'Kept' },
    });
    expect(patched.status).toBe(200);
    expect(await me(hearth, token)).toMatchObject({ status: 200, body: { global_name: 'Kept' } });
    expect(before.body).toMatchObject({ global_name: null });
  });

  it('one keep-alive connection presenting different tokens in turn is answered for each, and refused for one ended meanwhile', async () => {
    const alice = await register(hearth);
    const bob = await register(hearth);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { port } = hearth.http.server.address() as AddressInfo;
    const onConnection = (authorization: string) =>
      new Promise<{ status: number; body: { id?: string }; reused: boolean }>((resolve, reject) => {
        const sent = request(
          { agent, host: '127.0.0.1', port, path: '/api/v10/users/@me', headers: { authorization } },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              text += chunk;
            });
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                body: JSON.parse(text),
                reused: sent.reusedSocket,
              }),
            );
          },
        );
        sent.on('error', reject);
        sent.end();
      });
    try {
      expect(await onConnection(alice.token)).toMatchObject({ status: 200, body: { id: alice.userId } });
      const answers = [];
      for (const token of [bob.token, alice.token, bob.token, `Bot ${alice.token}`]) {
        answers.push(await onConnection(token));
      }
      expect(answers).toMatchObject([
        { status: 200, body: { id: bob.userId }, reused: true },
        { status: 200, body: { id: alice.userId }, reused: true },
        { status: 200, body: { id: bob.userId }, reused: true },
        { status: 401, body: UNAUTHORIZED, reused: true },
      ]);
      // Alice's session ends through another connection; hers still presents it.
      expect((await hearth.api('/auth/logout', { method: 'POST', auth: alice.token })).status).toBe(204);
      expect(await onConnection(alice.token)).toEqual({ status: 401, body: UNAUTHORIZED, reused: true });
      expect(await onConnection(bob.token)).toMatchObject({
        status: 200,
        body: { id: bob.userId },
        reused: true,
      });
    } finally {
      agent.destroy();
    }
  });
});

describe.skipIf(!withPostgres)(`on PostgreSQL (${POSTGRES_URL}), where nothing is kept`, () => {
  const schema = postgresSchema();
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ databaseUrl: schema.url });
  });
  afterAll(async () => {
    await hearth?.close();
    await schema.drop();
  });

  it('a session deleted by another connection (another node) is refused at once', async () => {
    const { token, userId } = await register(hearth);
    expect((await me(hearth, token)).status).toBe(200);
    expect((await me(hearth, token)).status).toBe(200);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const name = new URL(schema.url).searchParams.get('schema')!;
      await client.query(`DELETE FROM "${name}".sessions WHERE user_id = $1`, [userId]);
    } finally {
      await client.end();
    }
    expect(await me(hearth, token)).toEqual({ status: 401, body: UNAUTHORIZED });
  });
});
