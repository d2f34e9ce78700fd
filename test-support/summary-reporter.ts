import type { Reporter, TestModule } from 'vitest/node';
import { clearTallies, summarizeTallies } from './conformance-tally.js';

/**
 * Prints the conformance summary (how many responses were checked against reference/openapi.json), then
 * `tests: N passed, N failed, N skipped` as the run's last line, a form any CI log reader knows.
 * A test still pending when the run ends was never reported (its worker died, taking the batch of results
 * not yet sent): it counts as failed and is named, since vitest's own report of a lost worker names no file.
 */
export default class SummaryReporter implements Reporter {
  onTestRunStart(): void {
    clearTallies();
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const unreported: string[] = [];
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'skipped') counts.skipped++;
        else {
          counts.failed++;
          if (state === 'pending') unreported.push(`${module.relativeModuleId} > ${test.fullName}`);
        }
      }
      if (module.state() === 'failed' && module.children.size === 0) counts.failed++;
      else if ((module.state() === 'pending' || module.state() === 'queued') && module.children.size === 0) {
        counts.failed++;
        unreported.push(module.relativeModuleId);
      }
    }
    const lines = [
      ...summarizeTallies(),
      ...unreported.map((name) => `unreported (its worker exited first): ${name}`),
      `tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`,
    ];
    process.stdout.write(`\n${lines.map((l) => `${l}\n`).join('')}`);
  }
}
