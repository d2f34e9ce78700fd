import { readFileSync } from 'node:fs';
import { type JSONError, JSONErrors } from '@hearth/protocol';
import { describe, expect, it } from 'vitest';
import { tableRows } from '../../../test-support/markdown.js';

const ERRORS_MD = new URL('../../../docs/errors.md', import.meta.url);

const catalogue: [string, JSONError][] = Object.entries(JSONErrors);

describe('docs/errors.md is the JSONErrors catalogue of @hearth/protocol', () => {
  const [header, separator, ...rows] = tableRows(
    readFileSync(ERRORS_MD, 'utf8'),
    '<!-- catalogue:start -->',
    '<!-- catalogue:end -->',
  );

  it('has the columns code, status, message, name', () => {
    expect(header).toEqual(['code', 'status', 'message', 'name']);
    expect(separator?.every((cell) => /^:?-+:?$/.test(cell))).toBe(true);
  });

  it('lists every entry with its code, status, message and name, in catalogue order, and nothing else', () => {
    expect(rows).toEqual(
      catalogue.map(([name, { code, status, message }]) => [
        String(code),
        String(status),
        message,
        `\`${name}\``,
      ]),
    );
  });
});

describe('the catalogue (PROTOCOL.md §E.2)', () => {
  it('answers with a 4xx status, except 202 for IndexNotYetAvailable and 500 for GeneralInternalServerError', () => {
    const outside = catalogue
      .filter(([, { status }]) => status < 400 || status > 499)
      .map(([name, { status }]) => [name, status]);
    expect(outside).toEqual([
      ['GeneralInternalServerError', 500],
      ['IndexNotYetAvailable', 202],
    ]);
  });

  it('gives each entry its own code, except the plain HTTP errors that share code 0', () => {
    const seen = new Map<number, string>();
    const duplicates: string[] = [];
    for (const [name, { code }] of catalogue) {
      const first = seen.get(code);
      if (first !== undefined && code !== 0) duplicates.push(`${code}: ${first}, ${name}`);
      seen.set(code, first ?? name);
    }
    expect(duplicates).toEqual([]);
  });

  it('gives the plain HTTP errors of code 0 distinct statuses and the message "<status>: <reason>"', () => {
    const plain = catalogue.filter(([, { code }]) => code === 0);
    expect(plain.length).toBeGreaterThan(0);
    expect(new Set(plain.map(([, { status }]) => status)).size).toBe(plain.length);
    for (const [, { status, message }] of plain) expect(message).toMatch(new RegExp(`^${status}: \\S`));
  });
});
