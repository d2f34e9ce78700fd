import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { SNOWFLAKE_INCREMENT_BITS, SNOWFLAKE_MAX_PROCESS_ID } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Every spawn compiles the TypeScript sources through tsx: give each test room.
const TIMEOUT = 30_000;
const BIN = fileURLToPath(new URL('../bin/hearth.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LISTENING = /^hearth listening on (http:\/\/127\.0\.0\.1:(\d+))\n/;

const directory = mkdtempSync(join(tmpdir(), 'hearth-cli-'));
const DATABASE_URL = `sqlite:${join(directory, 'h.sqlite')}`;
const children = new Set<ChildProcess>();

/** The parent's environment without any HEARTH_* variable, plus the suite's database and `extra`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('HEARTH_')) env[key] = value;
  return { ...env, HEARTH_DATABASE_URL: DATABASE_URL, ...extra };
}

/** Everything a stream has written so far, and a way to wait until it satisfies a test. */
class Output {
  text = '';
  #ended = false;
  #waiters: { test: (text: string) => boolean; resolve: () => void; reject: (error: Error) => void }[] = [];

  #name: string;
  /** More to tell when the stream ends too early, such as the server's log. */
  readonly #context: () => string;

  constructor(stream: Readable, name: string, context: () => string = () => '') {
    this.#name = name;
    this.#context = context;
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.text += chunk;
      this.#settle();
    });
    stream.on('end', () => {
      this.#ended = true;
      this.#settle();
    });
    stream.on('error', (error) => {
      this.#name += ` (${error.message})`;
      this.#ended = true;
      this.#settle();
    });
  }

  until(test: (text: string) => boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ test, resolve: () => resolve(this.text), reject });
      this.#settle();
    });
  }

  #settle(): void {
    this.#waiters = this.#waiters.filter((waiter) => {
      if (waiter.test(this.text)) waiter.resolve();
      else if (this.#ended) {
        const context = this.#context();
        const message = `${this.#name} ended before the expected output:\n${this.text}`;
        waiter.reject(new Error(context ? `${message}\n---\n${context}` : message));
      } else return true;
      return false;
    });
  }
}

interface Running {
  child: ChildProcess;
  stdout: Output;
  stderr: Output;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const stderr = new Output(child.stderr!, `stderr of hearth ${args.join(' ')}`);
  const stdout = new Output(child.stdout!, `stdout of hearth ${args.join(' ')}`, () => stderr.text);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    // 'close' comes after both pipes are drained, so the output is complete.
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, stdout, stderr, exit };
}

/** Runs a command to completion. */
async function run(args: string[], env: Record<string, string> = {}) {
  const running = start(args, env);
  const { code } = await running.exit;
  return { code, stdout: running.stdout.text, stderr: running.stderr.text };
}

/** `hearth serve --port 0`, once it has printed its address. */
async function serve(env: Record<string, string> = {}): Promise<Running & { url: string; port: number }> {
  const running = start(['serve', '--port', '0'], env);
  const line = LISTENING.exec(await running.stdout.until((text) => LISTENING.test(text)));
  return { ...running, url: line![1]!, port: Number(line![2]) };
}

async function stop(running: Running): Promise<void> {
  running.child.kill('SIGTERM');
  await running.exit;
}

async function createUser(username: string): Promise<{ id: string; username: string; token: string }> {
  const { code, stdout, stderr } = await run([
    'users',
    'create',
    '--username',
    username,
    '--email',
    `${username}@example.com`,
    '--password',
    'long password',
    '--json',
  ]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout) as { id: string; username: string; token: string };
}

/**
 * True when a connection to the port is refused. False when it was accepted (and is closed at once), or
 * reset because the listener closed while it waited in the backlog: the next probe tells.
 */
function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') resolve(true);
      else if (error.code === 'ECONNRESET') resolve(false);
      else reject(error);
    });
  });
}

beforeAll(async () => {
  // One migration up front, so that commands running side by side meet an up-to-date schema.
  expect((await run(['migrate'])).code).toBe(0);
}, TIMEOUT);

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

describe('hearth apps create (README: Commands)', () => {
  it(
    'prints one JSON line {id, client_secret, bot_token, bot_user_id, owner_id, public_key}; the bot token authenticates as the bot user; the owner is a developer account, not the bot',
    async () => {
      const created = await run([
        'apps',
        'create',
        '--name',
        'Test Game',
        '--redirect-uri',
        'http://127.0.0.1/callback',
        '--json',
      ]);
      expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
      expect(created.stdout).toMatch(/^[^\n]+\n$/);
      const app = JSON.parse(created.stdout) as Record<string, string>;
      expect(app).toEqual({
        id: expect.stringMatching(/^\d+$/),
        client_secret: expect.any(String),
        bot_token: expect.any(String),
        bot_user_id: expect.stringMatching(/^\d+$/),
        owner_id: expect.stringMatching(/^\d+$/),
        public_key: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(Object.keys(app)).toEqual([
        'id',
        'client_secret',
        'bot_token',
        'bot_user_id',
        'owner_id',
        'public_key',
      ]);
      expect(app['owner_id']).not.toBe(app['bot_user_id']);

      const server = await serve();
      try {
        const response = await fetch(`${server.url}/api/v10/users/@me`, {
          headers: { authorization: `Bot ${app['bot_token']}` },
        });
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ id: app['bot_user_id'], bot: true });
        const application = await fetch(`${server.url}/api/v10/applications/@me`, {
          headers: { authorization: `Bot ${app['bot_token']}` },
        });
        const body = (await application.json()) as { owner: { id: string; bot?: boolean } };
        expect(body.owner.id).toBe(app['owner_id']);
        expect(body.owner.bot).toBeUndefined();
      } finally {
        await stop(server);
      }
    },
    TIMEOUT,
  );

  it(
    '--owner makes an existing user the developer: owner_id is that user',
    async () => {
      const user = await run([
        'users',
        'create',
        '--username',
        'studio.dev',
        '--email',
        'studio.dev@example.com',
        '--password',
        'correct horse battery',
        '--json',
      ]);
      const { id } = JSON.parse(user.stdout) as { id: string };
      const created = await run(['apps', 'create', '--name', 'Owned Game', '--owner', id, '--json']);
      expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
      expect((JSON.parse(created.stdout) as Record<string, string>)['owner_id']).toBe(id);
    },
    TIMEOUT,
  );
});

describe('hearth apps approve-intents-review (README: Commands; seed, Limits)', () => {
  it(
    'records the approval at the clock (--now) and prints when it lapses, a year later',
    async () => {
      const created = await run(['apps', 'create', '--name', 'Big Game', '--json']);
      const { id } = JSON.parse(created.stdout) as { id: string };
      // A one-shot command mints ids under a process id of its own, never a server's default 0.
      expect((BigInt(id) >> BigInt(SNOWFLAKE_INCREMENT_BITS)) & BigInt(SNOWFLAKE_MAX_PROCESS_ID)).not.toBe(
        0n,
      );
      const approved = await run([
        'apps',
        'approve-intents-review',
        '--id',
        id,
        '--now',
        '2026-03-01T00:00:00Z',
        '--json',
      ]);
      expect({ code: approved.code, stderr: approved.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(approved.stdout)).toEqual({
        id,
        approved_at: expect.stringMatching(/^2026-03-01T00:00:0\d\.\d{3}Z$/),
        expires_at: expect.stringMatching(/^2027-03-01T00:00:0\d\.\d{3}Z$/),
      });
    },
    TIMEOUT,
  );
});

describe('hearth users create (README: Commands)', () => {
  it(
    'prints {id, username, token} as one JSON line',
    async () => {
      const { code, stdout, stderr } = await run([
        'users',
        'create',
        '--username',
        'alice',
        '--email',
        'a@example.com',
        '--password',
        'long password',
        '--json',
      ]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toMatch(/^[^\n]+\n$/);
      expect(JSON.parse(stdout)).toEqual({
        id: expect.stringMatching(/^\d+$/),
        username: 'alice',
        token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      });
    },
    TIMEOUT,
  );

  it(
    'refuses the username "A" with exit 1 and one line naming the field, no stack trace',
    async () => {
      const result = await run([
        'users',
        'create',
        '--username',
        'A',
        '--email',
        'a2@example.com',
        '--password',
        'long password',
      ]);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: 'hearth: Invalid Form Body (username: Must be between 2 and 32 in length.)\n',
      });
    },
    TIMEOUT,
  );

  it(
    'refuses a malformed email with exit 1 and one line naming the field, no stack trace',
    async () => {
      const result = await run([
        'users',
        'create',
        '--username',
        'bad.email',
        '--email',
        'not-an-email',
        '--password',
        'long password',
      ]);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: 'hearth: Invalid Form Body (email: Not a well formed email address.)\n',
      });
    },
    TIMEOUT,
  );
});

describe('settings on the command line (README: Settings)', () => {
  it(
    'refuses --port 99999 with exit 1 naming the flag',
    async () => {
      expect(await run(['serve', '--port', '99999'])).toEqual({
        code: 1,
        stdout: '',
        stderr: 'hearth: --port must be an integer from 0 to 65535, got "99999"\n',
      });
    },
    TIMEOUT,
  );

  it(
    'refuses HEARTH_DATABASE_URL=mysql://x with exit 1 naming the environment variable',
    async () => {
      expect(await run(['migrate'], { HEARTH_DATABASE_URL: 'mysql://x' })).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'hearth: HEARTH_DATABASE_URL must be sqlite:PATH, sqlite::memory: or postgres://…, got "mysql://x"\n',
      });
    },
    TIMEOUT,
  );

  it(
    'names the flag, not the environment variable, when a flag overrides it',
    async () => {
      expect(
        await run(['migrate', '--database', 'mysql://flag'], { HEARTH_DATABASE_URL: DATABASE_URL }),
      ).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'hearth: --database must be sqlite:PATH, sqlite::memory: or postgres://…, got "mysql://flag"\n',
      });
    },
    TIMEOUT,
  );

  it(
    'treats empty HEARTH_* variables as unset',
    async () => {
      const server = await serve({ HEARTH_HOST: '', HEARTH_LOG_LEVEL: '', HEARTH_PORT: '', HEARTH_NOW: '' });
      await stop(server);
      expect(server.stdout.text).toMatch(LISTENING);
    },
    TIMEOUT,
  );
});

describe('hearth migrate (README: Commands)', () => {
  it(
    'prints "database is up to date"',
    async () => {
      expect(await run(['migrate'])).toEqual({ code: 0, stdout: 'database is up to date\n', stderr: '' });
    },
    TIMEOUT,
  );
});

describe('hearth serve (README: Commands)', () => {
  let server: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    server = await serve();
  }, TIMEOUT);

  afterAll(async () => {
    if (server) await stop(server);
  }, TIMEOUT);

  it('prints exactly "hearth listening on http://127.0.0.1:<port>" when ready, and the port answers', async () => {
    expect(server.stdout.text).toBe(`hearth listening on http://127.0.0.1:${server.port}\n`);
    const response = await fetch(`${server.url}/api/v10/users/@me`);
    expect(response.status).toBe(401);
  });

  it(
    'shares its database with the CLI: a user created while it runs is authenticated',
    async () => {
      const user = await createUser('bob.while.serving');
      const response = await fetch(`${server.url}/api/v10/users/@me`, {
        headers: { authorization: user.token },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ id: user.id, username: 'bob.while.serving' });
    },
    TIMEOUT,
  );
});

/** The bytes of one HTTP/1.1 response on a raw socket: status line, headers, body of Content-Length. */
function parseResponse(
  raw: string,
): { status: number; headers: Record<string, string>; body: string } | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...headerLines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = raw.slice(end + 4);
  const length = Number(headers['content-length'] ?? 0);
  if (Buffer.byteLength(body) < length) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

describe('graceful shutdown (README: Commands, hearth serve)', () => {
  let user: { id: string; token: string };

  beforeAll(async () => {
    user = await createUser('carol.shutdown');
  }, TIMEOUT);

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: finishes the request in flight, refuses new connections, exits 0 with only the listening line on stdout',
    async (signal) => {
      const server = await serve();
      const socket = net.connect({ host: '127.0.0.1', port: server.port });
      const received = new Output(socket, 'the socket of the request in flight', () => server.stderr.text);
      const body = JSON.stringify({ global_name: `Carol ${signal}` });
      const cut = 5;
      // Expect: 100-continue makes the server say when it has read the headers and taken the request.
      socket.write(
        [
          'PATCH /api/v10/users/@me HTTP/1.1',
          `Host: 127.0.0.1:${server.port}`,
          `Authorization: ${user.token}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
          'Expect: 100-continue',
          '',
          '',
        ].join('\r\n'),
      );
      const interim = 'HTTP/1.1 100 Continue\r\n\r\n';
      await received.until((text) => text.startsWith(interim));
      socket.write(body.slice(0, cut));

      server.child.kill(signal);
      await server.stderr.until((text) => text.includes('"msg":"shutting down"'));
      // The handler closes the listener a few event-loop turns after logging; probe until it has, while
      // the request above is still open. A server that kept listening would hold this test to its timeout.
      while (!(await connectionRefused(server.port))) {
        // The probe was accepted and closed at once: not yet.
      }

      socket.write(body.slice(cut));
      const raw = await received.until((text) => parseResponse(text.slice(interim.length)) !== undefined);
      const response = parseResponse(raw.slice(interim.length))!;
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body)).toMatchObject({ id: user.id, global_name: `Carol ${signal}` });
      socket.destroy();

      expect(await server.exit).toEqual({ code: 0, signal: null });
      expect(server.stdout.text).toBe(`hearth listening on http://127.0.0.1:${server.port}\n`);
    },
    TIMEOUT,
  );
});

describe('operator commands of the authorization server (README: Commands)', () => {
  it(
    'apps update grants approvals and a parent; users update/connect, guilds create and keys rotate take effect on a running server',
    async () => {
      const appOf = async (name: string) => {
        const created = await run(['apps', 'create', '--name', name, '--json']);
        return JSON.parse(created.stdout) as Record<string, string>;
      };
      const parent = await appOf('Parent Game');
      const child = await appOf('Child Game');
      const player = await createUser('operator.player');

      const approved = await run([
        'apps',
        'update',
        '--id',
        parent['id']!,
        '--approve',
        'IdentifyPremiumApproved',
        '--approve',
        'PublisherLinkingApproved',
        '--redirect-uri',
        'http://127.0.0.1/callback',
        '--json',
      ]);
      expect({ code: approved.code, stderr: approved.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(approved.stdout)).toEqual({
        id: parent['id'],
        public_client: 'false',
        redirect_uris: 'http://127.0.0.1/callback',
        parent_application_id: '',
        flags_new: String((1n << 48n) | (1n << 49n)),
      });
      const linked = await run(['apps', 'update', '--id', child['id']!, '--parent', parent['id']!, '--json']);
      expect(JSON.parse(linked.stdout)).toMatchObject({ parent_application_id: parent['id'] });
      const unknownFlag = await run(['apps', 'update', '--id', child['id']!, '--approve', 'Everything']);
      expect(unknownFlag.code).toBe(1);
      expect(unknownFlag.stderr).toMatch(/^hearth: Invalid Form Body \(flags: Value must be one of/);

      expect((await run(['users', 'update', '--id', player.id, '--premium-type', '2'])).code).toBe(0);
      expect((await run(['users', 'update', '--id', player.id, '--premium-type', '9'])).code).toBe(1);
      const connected = await run([
        'users',
        'connect',
        '--id',
        player.id,
        '--type',
        'steam',
        '--external-id',
        '7656',
        '--name',
        'op',
        '--json',
      ]);
      expect(JSON.parse(connected.stdout)).toEqual({ type: 'steam', id: '7656', name: 'op' });
      const guild = await run([
        'guilds',
        'create',
        '--owner',
        player.id,
        '--name',
        'Ops Hall',
        '--banner',
        'b1',
        '--json',
      ]);
      const { id: guildId } = JSON.parse(guild.stdout) as { id: string };

      const server = await serve();
      try {
        const keysBefore = (await (await fetch(`${server.url}/api/v10/oauth2/keys`)).json()) as {
          keys: { kid: string }[];
        };
        const rotated = await run(['keys', 'rotate', '--json']);
        const { kid } = JSON.parse(rotated.stdout) as { kid: string };
        const keysAfter = (await (await fetch(`${server.url}/api/v10/oauth2/keys`)).json()) as {
          keys: { kid: string }[];
        };
        expect(keysAfter.keys.map((k) => k.kid)).toEqual([kid, ...keysBefore.keys.map((k) => k.kid)]);

        const me = (await (
          await fetch(`${server.url}/api/v10/users/@me`, { headers: { authorization: player.token } })
        ).json()) as {
          premium_type: number;
        };
        expect(me.premium_type).toBe(2);
        const connections = (await (
          await fetch(`${server.url}/api/v10/users/@me/connections`, {
            headers: { authorization: player.token },
          })
        ).json()) as { type: string; id: string }[];
        expect(connections.map((c) => [c.type, c.id])).toEqual([['steam', '7656']]);
        const guilds = (await (
          await fetch(`${server.url}/api/v10/users/@me/guilds`, { headers: { authorization: player.token } })
        ).json()) as { id: string; banner: string; owner: boolean }[];
        expect(guilds).toMatchObject([{ id: guildId, banner: 'b1', owner: true }]);
        const application = (await (
          await fetch(`${server.url}/api/v10/applications/@me`, {
            headers: { authorization: `Bot ${parent['bot_token']}` },
          })
        ).json()) as { eligible_oauth2_scopes: string[]; flags: number; flags_new: string };
        expect(application.flags).toBe(0);
        expect(application.eligible_oauth2_scopes).toContain('identify.premium');
      } finally {
        await stop(server);
      }
    },
    TIMEOUT * 6,
  );
});
