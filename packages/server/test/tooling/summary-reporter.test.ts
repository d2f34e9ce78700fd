import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'hearth-reporter-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the suite summary reporter', () => {
  it('counts a test its dead worker never reported as failed, and names it (vitest names no file)', async () => {
    writeFileSync(
      join(dir, 'dies.test.ts'),
      `import { it } from 'vitest';\nit('loses its worker', () => { process.kill(process.pid, 'SIGKILL'); });\n`,
    );
    writeFileSync(join(dir, 'lives.test.ts'), `import { it } from 'vitest';\nit('passes', () => {});\n`);
    writeFileSync(
      join(dir, 'vitest.config.mjs'),
      `export default { test: { root: ${JSON.stringify(dir)}, include: ['*.test.ts'], reporters: [${JSON.stringify(join(root, 'test-support/summary-reporter.ts'))}] } };\n`,
    );
    const run = await promisify(execFile)(
      process.execPath,
      [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', join(dir, 'vitest.config.mjs')],
      // Its own tally folder: the outer run's conformance tallies are cleared by a run's start.
      { cwd: dir, env: { ...process.env, HEARTH_CONFORMANCE_TALLY_DIR: join(dir, 'tally') } },
    ).catch((error: { code: number; stdout: string }) => error);
    expect(run).toMatchObject({ code: 1 });
    const lines = run.stdout.trim().split('\n');
    expect(lines).toContain('unreported (its worker exited first): dies.test.ts > loses its worker');
    expect(lines.at(-1)).toBe('tests: 1 passed, 1 failed, 0 skipped');
  });
});
