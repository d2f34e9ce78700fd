// `tsx bench/heap-top.ts <before.heapsnapshot> <after.heapsnapshot> [per] [count]`: what the heap gained
// between two snapshots, by constructor (objects and self bytes), divided by `per` (e.g. the sessions that
// connected in between), for the profile notes of bench/README.md.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

const [beforeFile, afterFile, perArg, countArg] = process.argv.slice(2);
if (!beforeFile || !afterFile) {
  console.error('usage: tsx bench/heap-top.ts <before.heapsnapshot> <after.heapsnapshot> [per] [count]');
  process.exit(2);
}
const per = Number(perArg ?? 1);
const count = Number(countArg ?? 30);

const before = tally(beforeFile);
const after = tally(afterFile);
const rows = [...after].map(([name, a]) => {
  const b = before.get(name) ?? { objects: 0, bytes: 0 };
  return { name, objects: (a.objects - b.objects) / per, bytes: (a.bytes - b.bytes) / per };
});
const total = rows.reduce((sum, row) => sum + row.bytes, 0);
console.log(`heap gained: ${total.toFixed(0)} bytes per unit (${per} units)\n`);
console.log('bytes/unit  objects/unit  constructor (type)');
for (const row of rows.sort((x, y) => y.bytes - x.bytes).slice(0, count)) {
  console.log(`${row.bytes.toFixed(0).padStart(10)}  ${row.objects.toFixed(2).padStart(12)}  ${row.name}`);
}

/** Objects and self bytes by `name (type)`: a snapshot's node list, read field by field. */
function tally(file: string): Map<string, { objects: number; bytes: number }> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const out = new Map<string, { objects: number; bytes: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt]!] ?? '?';
    const raw = snapshot.strings[snapshot.nodes[i + nameAt]!] ?? '?';
    // Strings and code are keyed by their type: their names are their contents.
    const name = type === 'object' || type === 'closure' ? `${raw} (${type})` : `(${type})`;
    const entry = out.get(name) ?? { objects: 0, bytes: 0 };
    entry.objects += 1;
    entry.bytes += snapshot.nodes[i + sizeAt]!;
    out.set(name, entry);
  }
  return out;
}
