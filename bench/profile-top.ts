// `tsx bench/profile-top.ts <file.cpuprofile> [count] [--last <seconds>]`: where a profiled server's CPU went,
// by function (self time) and by package, for the profile notes of bench/README.md; with `--last`, only in the
// last seconds of its life (the measured runs, without the start-up that precedes them).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { last: { type: 'string' } }, allowPositionals: true });
const [file, countArg] = positionals;
if (!file) {
  console.error('usage: tsx bench/profile-top.ts <file.cpuprofile> [count] [--last <seconds>]');
  process.exit(2);
}
const count = Number(countArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

// Sample i was taken at the sum of the deltas up to it; keep those within `--last` of the end.
const at: number[] = [];
let elapsed = 0;
for (const delta of profile.timeDeltas) {
  elapsed += delta;
  at.push(elapsed);
}
const from = values.last === undefined ? Number.NEGATIVE_INFINITY : elapsed - Number(values.last) * 1e6;
const selfMicros = new Map<number, number>();
for (const [i, id] of profile.samples.entries()) {
  if (at[i]! < from) continue;
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0;
  if (micros === 0) continue;
  const where = shortUrl(node.callFrame.url);
  const name = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  byPackage.set(packageOf(where), (byPackage.get(packageOf(where)) ?? 0) + micros);
}

print('by package', byPackage);
print('by function (self time)', byFunction);

function print(title: string, table: Map<string, number>): void {
  console.log(`\n${title}, of ${(total / 1000).toFixed(0)} ms sampled:`);
  for (const [key, micros] of [...table].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    console.log(`${((100 * micros) / total).toFixed(1).padStart(5)} %  ${key}`);
  }
}

function shortUrl(url: string): string {
  if (url === '') return '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const packages = url.indexOf('/packages/');
  return packages >= 0 ? url.slice(packages + 1) : url.replace(/^file:\/\//, '');
}

function packageOf(where: string): string {
  if (where.startsWith('packages/')) return where.split('/').slice(0, 5).join('/');
  if (where.startsWith('node:') || where.startsWith('(')) return where;
  const parts = where.split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}
