import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode, type ServerProcess, startServer } from './children.js';

/** The repository root, where every child runs. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const HEARTH = join(ROOT, 'packages/server/bin/hearth.js');
export const BARE_FASTIFY = join(ROOT, 'bench/baseline/bare-fastify.ts');
export const MINIMAL_WORK = join(ROOT, 'bench/baseline/minimal-work.ts');
export const HOST = '127.0.0.1';

/**
 * `hearth serve` on `database`, loopback only, warnings only, and the rate limiter on with a global budget it
 * never reaches (so that its cost is included).
 */
export function startHearth(database: string): Promise<ServerProcess> {
  return startServer({
    name: 'hearth serve',
    nodeFlags: profileFlags(),
    args: [
      HEARTH,
      'serve',
      '--host',
      HOST,
      '--port',
      '0',
      '--database',
      database,
      '--log-level',
      'warn',
      '--rate-limit-global',
      '1000000000',
    ],
    cwd: ROOT,
    ready: /^hearth listening on (http:\/\/\S+)$/,
    timeoutMs: 30_000,
  });
}

/**
 * `BENCH_PROFILE=<dir>`: every Hearth server writes a V8 CPU profile there when it stops
 * (`tsx bench/profile-top.ts <file>` prints where its time went).
 */
export function profileFlags(): string[] {
  const dir = process.env['BENCH_PROFILE'];
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
}

/** `bare-fastify.ts` with the given arguments (see that file), loopback only. */
export function startBareFastify(args: string[]): Promise<ServerProcess> {
  return startServer({
    name: 'bare-fastify',
    args: ['--import', 'tsx', BARE_FASTIFY, '--host', HOST, ...args],
    cwd: ROOT,
    ready: /^bare-fastify listening on (http:\/\/\S+)$/,
    timeoutMs: 30_000,
  });
}

/** `minimal-work.ts` with the given arguments (see that file), loopback only. */
export function startMinimalWork(args: string[]): Promise<ServerProcess> {
  return startServer({
    name: 'minimal-work',
    args: ['--import', 'tsx', MINIMAL_WORK, '--host', HOST, ...args],
    cwd: ROOT,
    ready: /^minimal-work listening on (http:\/\/\S+)$/,
    timeoutMs: 30_000,
  });
}

/** `hearth users create` on the database the server will open; returns the session token. */
export async function createUser(database: string): Promise<{ token: string }> {
  const created = await hearthJson(database, 'hearth users create', [
    'users',
    'create',
    '--username',
    'bench',
    '--email',
    'bench@example.com',
    '--password',
    'bench password',
  ]);
  return { token: stringField(created, 'token', 'hearth users create') };
}

/** `hearth apps create` (a confidential client) on the database the server will open. */
export async function createApplication(
  database: string,
  redirectUri: string,
): Promise<{ id: string; clientSecret: string }> {
  const name = 'hearth apps create';
  const created = await hearthJson(database, name, [
    'apps',
    'create',
    '--name',
    'Bench',
    '--redirect-uri',
    redirectUri,
  ]);
  return { id: stringField(created, 'id', name), clientSecret: stringField(created, 'client_secret', name) };
}

/** An application enabled for provisional accounts (`apps create`, then `apps update --approve`); its bot token. */
export async function createProvisionalGame(database: string): Promise<{ id: string; botToken: string }> {
  const created = await hearthJson(database, 'hearth apps create', ['apps', 'create', '--name', 'Bench']);
  const id = stringField(created, 'id', 'hearth apps create');
  await hearthJson(database, 'hearth apps update', [
    'apps',
    'update',
    '--id',
    id,
    '--approve',
    'ProvisionalAccountsEnabled',
  ]);
  return { id, botToken: stringField(created, 'bot_token', 'hearth apps create') };
}

/** Runs a one-shot `hearth … --json` command and answers the object on its last line of output. */
async function hearthJson(database: string, name: string, args: string[]): Promise<object> {
  const stdout = await runNode({
    name,
    args: [HEARTH, ...args, '--json'],
    cwd: ROOT,
    env: { HEARTH_DATABASE_URL: database },
    timeoutMs: 30_000,
  });
  let value: unknown;
  try {
    value = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
  } catch {
    throw new Error(`${name} printed no JSON: ${stdout}`);
  }
  if (typeof value !== 'object' || value === null) throw new Error(`${name} printed no object: ${stdout}`);
  return value;
}

function stringField(value: object, key: string, name: string): string {
  const field: unknown = (value as Record<string, unknown>)[key];
  if (typeof field !== 'string' || field === '') {
    throw new Error(`${name} printed no ${key}: ${JSON.stringify(value)}`);
  }
  return field;
}
