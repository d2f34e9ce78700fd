/**
 * Rewrites the catalogue table of docs/errors.md from JSONErrors (`npm run docs:errors`): the table is the
 * catalogue, and a test keeps the two identical, so an added error code needs only this command.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { JSONErrors } from '@hearth/protocol';

const FILE = new URL('../docs/errors.md', import.meta.url);
const START = '<!-- catalogue:start -->';
const END = '<!-- catalogue:end -->';

const rows = [
  ['code', 'status', 'message', 'name'],
  ...Object.entries(JSONErrors).map(([name, { code, status, message }]) => [
    String(code),
    String(status),
    message,
    `\`${name}\``,
  ]),
];
const widths = rows[0]!.map((_, column) => Math.max(3, ...rows.map((row) => row[column]!.length)));
const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
const table = [line(rows[0]!), line(widths.map((width) => '-'.repeat(width))), ...rows.slice(1).map(line)];

const text = readFileSync(FILE, 'utf8');
const start = text.indexOf(START);
const end = text.indexOf(END);
if (start === -1 || end === -1) throw new Error('docs/errors.md has lost its catalogue markers');
writeFileSync(FILE, `${text.slice(0, start + START.length)}\n${table.join('\n')}\n${text.slice(end)}`);
