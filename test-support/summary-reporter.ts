import type { Reporter, TestModule } from 'vitest/node';
import { clearTallies, summarizeTallies } from './conformance-tally.js';

/**
 * Prints the conformance summary (how many responses were checked against reference/openapi.json), then
 * `tests: N passed, N failed, N skipped` as the run's last line, a form any CI log reader knows.
 */
export default class SummaryReporter implements Reporter {
  onTestRunStart(): void {
    clearTallies();
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
      }
      if (module.state() === 'failed' && module.children.size === 0) counts.failed++;
    }
    const conformance = summarizeTallies();
    process.stdout.write(
      `\n${conformance.map((l) => `${l}\n`).join('')}tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
    );
  }
}
