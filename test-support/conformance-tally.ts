import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Tally } from './conformance.js';
import { CONFORMANCE_ALLOWLIST } from './conformance-allowlist.js';

/** Where each test file leaves its conformance tally for the summary reporter (one run at a time). */
export const CONFORMANCE_TALLY_DIR =
  process.env['HEARTH_CONFORMANCE_TALLY_DIR'] ??
  fileURLToPath(new URL('../node_modules/.cache/hearth-conformance', import.meta.url));

export function clearTallies(): void {
  rmSync(CONFORMANCE_TALLY_DIR, { recursive: true, force: true });
}

/** The run's conformance summary: responses checked per outcome, operations seen, unused allowlist entries. */
export function summarizeTallies(): string[] {
  let files: string[];
  try {
    files = readdirSync(CONFORMANCE_TALLY_DIR).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const totals = { validated: 0, allowlisted: 0, violation: 0 };
  const operations = new Set<string>();
  const used = new Set<number>();
  const violations = new Map<string, number>();
  for (const file of files) {
    const tally = JSON.parse(readFileSync(`${CONFORMANCE_TALLY_DIR}/${file}`, 'utf8')) as Tally;
    for (const [operation, counts] of Object.entries(tally.operations)) {
      operations.add(operation);
      totals.validated += counts.validated;
      totals.allowlisted += counts.allowlisted;
      totals.violation += counts.violation;
    }
    for (const index of tally.usedEntries) used.add(index);
    for (const [signature, n] of Object.entries(tally.violations)) {
      violations.set(signature, (violations.get(signature) ?? 0) + n);
    }
  }
  const checked = totals.validated + totals.allowlisted + totals.violation;
  const lines = [
    `conformance: ${checked} responses checked against reference/openapi.json in ${files.length} files ` +
      `(${operations.size} method/route/status): ${totals.validated} conform, ` +
      `${totals.allowlisted} excused by the allowlist, ${totals.violation} violations`,
  ];
  for (const [signature, n] of [...violations].sort()) lines.push(`  ✗ ${signature} (×${n})`);
  const unused = CONFORMANCE_ALLOWLIST.filter((_, i) => !used.has(i));
  if (unused.length > 0 && unused.length < CONFORMANCE_ALLOWLIST.length) {
    lines.push(`conformance: ${unused.length} allowlist entries excused nothing in this run:`);
    for (const e of unused)
      lines.push(`  ${e.method} ${e.route} ${e.status ?? ''} ${e.problem} ${e.instancePath ?? ''}`);
  }
  return lines;
}
