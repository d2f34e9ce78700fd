import { expect } from 'vitest';

/** The rows of the markdown table between two markers, as trimmed cells (`\|` is a literal bar). */
export function tableRows(markdown: string, start: string, end: string): string[][] {
  const from = markdown.indexOf(start);
  const to = markdown.indexOf(end);
  if (from === -1 || to < from) throw new Error(`markers ${start} … ${end} not found`);
  const lines = markdown
    .slice(from + start.length, to)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  for (const line of lines) expect(line).toMatch(/^\|.*\|$/);
  return lines.map((line) =>
    line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim().replaceAll('\\|', '|')),
  );
}
