import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../packages/server/bin/hearth.js', import.meta.url));

/**
 * Starts `hearth` once before the workers do, so that its bundle of the sources (bin/hearth.js) is built
 * once for the run rather than by each of the first commands the suites spawn side by side.
 */
export default function setup(): void {
  execFileSync(process.execPath, [BIN, 'help'], { stdio: 'ignore' });
}
