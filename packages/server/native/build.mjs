// npm's install script of @hearth/server: builds the shared-memory view of storage/shm-view.ts. It is optional:
// without a compiler, or Node's headers, the server reads the same bytes with one system call each time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = fileURLToPath(new URL('..', import.meta.url));
// npm names its node-gyp to the scripts it runs; run by hand, the one of the npm installed beside node.
const gyp =
  process.env['npm_config_node_gyp'] ??
  join(dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
const result = existsSync(gyp)
  ? spawnSync(process.execPath, [gyp, 'rebuild'], { cwd: server, stdio: ['ignore', 'ignore', 'pipe'] })
  : undefined;
if (result?.status !== 0) {
  const reason = result?.stderr?.toString().trim().split('\n').at(-1) ?? 'no node-gyp found';
  console.warn(
    `@hearth/server: the shared-memory view was not built (${reason}); the server works without it`,
  );
}
// The image build copies build/ whether or not the view was built.
mkdirSync(join(server, 'build'), { recursive: true });
