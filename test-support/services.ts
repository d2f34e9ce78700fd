import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';

/**
 * The external services some suites need. Missing services skip those suites with a visible notice,
 * except under HEARTH_REQUIRE_SERVICES=1 (CI), where they fail.
 */
export const POSTGRES_URL =
  process.env['HEARTH_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env['HEARTH_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const required = process.env['HEARTH_REQUIRE_SERVICES'] === '1';

async function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function availability(name: string, url: string): Promise<boolean> {
  if (await reachable(url)) return true;
  if (required) throw new Error(`${name} is required (HEARTH_REQUIRE_SERVICES=1) but ${url} is unreachable`);
  console.warn(
    `\n  ⚠ ${name} at ${url} is unreachable: its suites are SKIPPED (set HEARTH_REQUIRE_SERVICES=1 to fail)\n`,
  );
  return false;
}

/** The interpreter of the OS package python3-discord (a pyenv or venv python3 on PATH would not see it). */
export const DISCORD_PY_PYTHON = process.env['HEARTH_TEST_PYTHON'] ?? '/usr/bin/python3';

/** discord.py importable by DISCORD_PY_PYTHON (`.ci/run` installs python3-discord); skipped or failed as above. */
export function discordPyAvailable(): boolean {
  const probe = spawnSync(DISCORD_PY_PYTHON, ['-c', 'import discord, yarl'], { encoding: 'utf8' });
  if (probe.status === 0) return true;
  const why = `discord.py is not importable by ${DISCORD_PY_PYTHON} (apt-get install python3-discord)`;
  if (required) throw new Error(`${why}, and HEARTH_REQUIRE_SERVICES=1 requires it`);
  console.warn(`\n  ⚠ ${why}: its suite is SKIPPED (set HEARTH_REQUIRE_SERVICES=1 to fail)\n`);
  return false;
}

export const postgresAvailable = () => availability('PostgreSQL', POSTGRES_URL);
export const redisAvailable = () => availability('Redis', REDIS_URL);

/** A fresh schema for one test file, so runs cannot collide; `drop` removes it. */
export function postgresSchema(): { url: string; drop: () => Promise<void> } {
  const schema = `hearth_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const url = `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  return {
    url,
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

/** A key prefix of its own for one test file. */
export function redisPrefix(): string {
  return `hearth-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}
