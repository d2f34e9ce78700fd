import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEWAY_PATH } from '@hearth/protocol';
import { loadConfig, SETTINGS } from '@hearth/server';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';

/**
 * Issue 22, deployment: compose.yaml runs two Hearth nodes on one PostgreSQL and one Redis behind a proxy
 * that keeps gateway sockets on one node; Dockerfile builds the image they run. The files are read as Docker
 * would read them, and Compose itself validates compose.yaml (required under HEARTH_REQUIRE_SERVICES).
 */

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface Service {
  build?: unknown;
  image?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string };
}

interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** Compose's interpolation of `${NAME:-default}` and `${NAME}` from an environment. */
function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
    const set = env[name];
    return set !== undefined && set !== '' ? set : (fallback ?? '');
  });
}

function loadCompose(): Compose {
  const document = parseDocument(read('compose.yaml'), { uniqueKeys: true, prettyErrors: true });
  expect(document.errors.map(String)).toEqual([]);
  expect(document.warnings.map(String)).toEqual([]);
  return document.toJS() as Compose;
}

const compose = loadCompose();
const NODES = ['hearth-1', 'hearth-2'] as const;
const node = (name: string) => compose.services[name] as Service;
/** A node's environment as the container gets it, with compose's defaults. */
const environmentOf = (name: string, env: Record<string, string | undefined> = {}) =>
  Object.fromEntries(
    Object.entries(node(name).environment ?? {}).map(([key, value]) => [
      key,
      interpolate(String(value), env),
    ]),
  );

describe('compose.yaml', () => {
  it('runs two Hearth nodes, PostgreSQL, Redis and a proxy, each with a health check', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'hearth-1',
      'hearth-2',
      'postgres',
      'proxy',
      'redis',
    ]);
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.healthcheck?.test?.[0], `${name} health check`).toMatch(/^CMD/);
      expect(service.healthcheck?.test?.length, name).toBeGreaterThan(1);
    }
    for (const name of NODES) {
      // Readiness (database and Redis reachable, migrations applied) decides when the proxy may start.
      expect(node(name).healthcheck?.test.join(' ')).toContain('http://127.0.0.1:8080/readyz');
      expect(node(name).build).toBe('.');
      expect(node(name).image).toBe(node('hearth-1').image);
    }
    expect(node('postgres').healthcheck?.test).toContain('pg_isready');
    expect(node('redis').healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('gives both nodes the same PostgreSQL, Redis, public URL and attachments, and each its own worker id', () => {
    const [first, second] = NODES.map((name) => environmentOf(name));
    for (const key of ['HEARTH_DATABASE_URL', 'HEARTH_REDIS_URL', 'HEARTH_PUBLIC_URL', 'HEARTH_DATA_DIR']) {
      expect(first?.[key], key).toBeDefined();
      expect(second?.[key], key).toBe(first?.[key]);
    }
    expect(first?.['HEARTH_DATABASE_URL']).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    expect(first?.['HEARTH_REDIS_URL']).toMatch(/^redis:\/\/redis:6379/);
    expect(first?.['HEARTH_WORKER_ID']).not.toBe(second?.['HEARTH_WORKER_ID']);
    for (const name of NODES) {
      expect(node(name).volumes).toContain(`hearth-data:${first?.['HEARTH_DATA_DIR']}`);
      expect(node(name).depends_on).toMatchObject({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    }
    expect(Object.keys(compose.volumes ?? {})).toEqual(
      expect.arrayContaining(['hearth-data', 'postgres-data']),
    );
  });

  it('sets only settings the server knows, with values its own parser accepts (defaults and overrides)', () => {
    const known = new Set<string>(SETTINGS.map((setting) => setting.env));
    for (const overrides of [
      {},
      { HEARTH_ADMIN_TOKEN: 'a'.repeat(40), HEARTH_PUBLIC_URL: 'https://play.example' },
    ]) {
      const seen = new Set<number>();
      for (const name of NODES) {
        const env = environmentOf(name, overrides);
        expect(Object.keys(env).filter((key) => !known.has(key))).toEqual([]);
        const config = loadConfig({}, env);
        expect(config.host).toBe('0.0.0.0');
        expect(config.databaseUrl.startsWith('postgres://')).toBe(true);
        expect(config.redisUrl).toBe('redis://redis:6379');
        expect(config.publicUrl).toBe(overrides.HEARTH_PUBLIC_URL ?? 'http://localhost:8080');
        expect(config.adminToken).toBe(overrides.HEARTH_ADMIN_TOKEN);
        seen.add(config.workerId * 32 + config.processId);
      }
      expect(seen.size).toBe(NODES.length);
    }
  });

  it('connects the nodes to the database PostgreSQL is given, with the same password', () => {
    const postgres = node('postgres').environment ?? {};
    for (const password of [undefined, 'another secret']) {
      const env = { HEARTH_POSTGRES_PASSWORD: password };
      const url = new URL(environmentOf('hearth-1', env)['HEARTH_DATABASE_URL'] ?? '');
      expect(decodeURIComponent(url.password)).toBe(interpolate(postgres['POSTGRES_PASSWORD'] ?? '', env));
      expect(url.username).toBe(postgres['POSTGRES_USER']);
      expect(url.pathname).toBe(`/${postgres['POSTGRES_DB']}`);
    }
  });

  it('publishes the proxy on the port of the public URL, after both nodes are ready', () => {
    const proxy = node('proxy');
    const publicUrl = new URL(environmentOf('hearth-1')['HEARTH_PUBLIC_URL'] ?? '');
    const [published, target] = interpolate(proxy.ports?.[0] ?? '', {}).split(':');
    expect(published).toBe(publicUrl.port);
    expect(proxy.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(read('deploy/nginx.conf')).toMatch(new RegExp(`listen ${target};`));
    for (const name of NODES) expect(proxy.depends_on?.[name]).toEqual({ condition: 'service_healthy' });
  });
});

describe('deploy/nginx.conf', () => {
  const conf = read('deploy/nginx.conf');
  const upstream = (name: string) => new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(conf)?.[1] ?? '';
  const location = (path: string) =>
    new RegExp(`location ${path.replace(/[/]/g, '\\/')} \\{([^}]*)\\}`).exec(conf)?.[1] ?? '';

  it('sends HTTP to every node and keeps each gateway client on one node (sticky), as a WebSocket', () => {
    for (const name of ['hearth_http', 'hearth_gateway']) {
      const servers = [...upstream(name).matchAll(/server ([\w-]+):(\d+)/g)].map((m) => `${m[1]}:${m[2]}`);
      expect(servers, name).toEqual(NODES.map((n) => `${n}:${environmentOf(n)['HEARTH_PORT']}`));
    }
    expect(upstream('hearth_gateway')).toMatch(/\b(hash \$remote_addr consistent|ip_hash);/);
    const gateway = location(GATEWAY_PATH);
    expect(gateway).toContain('proxy_pass http://hearth_gateway;');
    expect(gateway).toContain('proxy_set_header Upgrade $http_upgrade;');
    expect(gateway).toContain('proxy_set_header Connection $connection_upgrade;');
    // A draining node answers upgrades 404 (gateway-server.ts): the proxy tries the other node.
    expect(gateway).toMatch(/proxy_next_upstream [^;]*\bhttp_404\b[^;]*;/);
    // Longer than a heartbeat interval (41.25 s), or idle sockets would be cut between heartbeats.
    expect(Number(/proxy_read_timeout (\d+)s;/.exec(gateway)?.[1])).toBeGreaterThan(41.25);
    expect(location('/')).toContain('proxy_pass http://hearth_http;');
    for (const block of [gateway, location('/')])
      expect(block).toContain('proxy_set_header Host $http_host;');
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const ignored = read('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));

  it('runs the server as a user other than root, with production dependencies only', () => {
    const users = [...dockerfile.matchAll(/^USER (\S+)/gm)].map((m) => m[1]);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)$/);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "packages\/server\/bin\/hearth\.js"\]$/m);
    expect(dockerfile).toMatch(/^CMD \["serve"\]$/m);
    // bin/hearth.js bundles the TypeScript sources with esbuild, or runs them through tsx where it cannot
    // write its cache: without dev dependencies both must still be there.
    const bin = read('packages/server/bin/hearth.js');
    expect(bin).toContain("import('esbuild')");
    expect(bin).toContain("import('tsx/esm/api')");
    const server = JSON.parse(read('packages/server/package.json')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(server.dependencies)).toEqual(expect.arrayContaining(['esbuild', 'tsx']));
    // The `node` user cannot write beside the sources: the image is built with the bundle in place.
    const bundled = dockerfile.indexOf('RUN node packages/server/bin/hearth.js');
    expect(bundled).toBeGreaterThan(dockerfile.indexOf('COPY packages/server/src'));
    expect(bundled).toBeLessThan(dockerfile.search(/^USER /m));
  });

  it('checks its health at /healthz on the port it serves', () => {
    const check = /^HEALTHCHECK [^\n]*\\\n\s*CMD (.*)$/m.exec(dockerfile)?.[1] ?? '';
    expect(check).toContain('/healthz');
    expect(check).toContain('process.env.HEARTH_PORT');
    expect(dockerfile).toMatch(/^\s+HEARTH_PORT=8080 \\$/m);
    expect(dockerfile).toMatch(/^EXPOSE 8080$/m);
  });

  it('copies only files that exist and that .dockerignore lets through', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      (m[1] ?? '').split(' '),
    );
    expect(sources.length).toBeGreaterThan(5);
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      const excluded = ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`));
      expect(excluded, `${source} excluded by .dockerignore`).toBe(false);
    }
    expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '.git', 'data']));
  });
});

// Compose v2 (the docker plugin) where it exists, else Compose v1 (Debian's docker-compose, which .ci/run installs).
const composeCommand = [['docker', 'compose'], ['docker-compose']].find(
  ([command, ...args]) =>
    spawnSync(command as string, [...args, 'version'], { encoding: 'utf8' }).status === 0,
);

describe('docker compose config', () => {
  it.skipIf(composeCommand === undefined && process.env.HEARTH_REQUIRE_SERVICES !== '1')(
    'validates compose.yaml with Compose (required in CI)',
    () => {
      expect(composeCommand, 'neither `docker compose` nor `docker-compose` is installed').toBeDefined();
      const [command, ...args] = composeCommand as string[];
      const result = spawnSync(
        command as string,
        [...args, '-f', join(ROOT, 'compose.yaml'), 'config', '--quiet'],
        {
          encoding: 'utf8',
        },
      );
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    },
  );
});
