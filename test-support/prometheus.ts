/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests of `/metrics`: it refuses
 * what a Prometheus server would refuse (bad names, bad escapes, a TYPE after its samples, a family split
 * in two, duplicate series, histograms whose buckets are not cumulative or lack `+Inf`).
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`, … for histograms). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<MetricType, readonly string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export class ExpositionError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

export function parseExposition(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const finished = new Set<string>();
  const seriesSeen = new Set<string>();
  let current: MetricFamily | undefined;
  if (text.length > 0 && !text.endsWith('\n'))
    throw new ExpositionError(0, 'the text must end with a newline');
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((line, index) => {
    const n = index + 1;
    if (line.trim() === '') return;
    const family = (name: string): MetricFamily => {
      if (!METRIC_NAME.test(name)) throw new ExpositionError(n, `bad metric name "${name}"`);
      if (current && current.name !== name) finished.add(current.name);
      if (finished.has(name)) throw new ExpositionError(n, `family ${name} is split`);
      let found = families.get(name);
      if (!found) {
        found = { name, type: 'untyped', help: undefined, samples: [] };
        families.set(name, found);
      }
      current = found;
      return found;
    };
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!match) return; // a comment
      const [, keyword, name = '', rest = ''] = match;
      const target = family(name);
      if (keyword === 'HELP') {
        if (target.help !== undefined) throw new ExpositionError(n, `second HELP for ${name}`);
        target.help = unescapeHelp(rest, n);
      } else {
        if (!TYPES.has(rest as MetricType)) throw new ExpositionError(n, `bad TYPE "${rest}"`);
        if (target.samples.length > 0) throw new ExpositionError(n, `TYPE of ${name} after its samples`);
        target.type = rest as MetricType;
      }
      return;
    }
    const sample = parseSample(line, n);
    const owner = familyOf(sample.name, current, families);
    const target = family(owner);
    if (!SUFFIXES[target.type].some((suffix) => sample.name === `${owner}${suffix}`)) {
      throw new ExpositionError(n, `${sample.name} does not belong to ${target.type} ${owner}`);
    }
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seriesSeen.has(key)) throw new ExpositionError(n, `duplicate series ${key}`);
    seriesSeen.add(key);
    target.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The family a sample belongs to: the current one when its name extends it, else its own name. */
function familyOf(name: string, current: MetricFamily | undefined, families: Map<string, MetricFamily>) {
  if (current && SUFFIXES[current.type].some((suffix) => name === `${current.name}${suffix}`)) {
    return current.name;
  }
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && ['histogram', 'summary'].includes(families.get(base)?.type ?? ''))
      return base;
  }
  return name;
}

function parseSample(line: string, n: number): Sample {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)(?: (-?\d+))?$/.exec(line);
  if (!match) throw new ExpositionError(n, `not a sample: ${line}`);
  const [, name = '', labelText, valueText = ''] = match;
  return { name, labels: labelText ? parseLabels(labelText, n) : {}, value: parseValue(valueText, n) };
}

function parseLabels(text: string, n: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 1;
  const end = text.length - 1;
  while (i < end) {
    const nameMatch = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(text.slice(i));
    if (!nameMatch?.[1]) throw new ExpositionError(n, `bad label at "${text.slice(i)}"`);
    const name = nameMatch[1];
    if (!LABEL_NAME.test(name) || name in labels)
      throw new ExpositionError(n, `bad or repeated label ${name}`);
    i += nameMatch[0].length;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined || i >= end + 1) throw new ExpositionError(n, 'unterminated label value');
      if (c === '"') break;
      if (c === '\\') {
        const next = text[i + 1];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new ExpositionError(n, `bad escape \\${next ?? ''}`);
        i += 2;
      } else {
        if (c === '\n') throw new ExpositionError(n, 'newline in a label value');
        value += c;
        i += 1;
      }
    }
    labels[name] = value;
    i += 1;
    if (text[i] === ',') i += 1;
    else if (i !== end) throw new ExpositionError(n, `expected , or } at "${text.slice(i)}"`);
  }
  return labels;
}

function parseValue(text: string, n: number): number {
  // As Prometheus reads them (Go's ParseFloat): NaN and Inf in any case; prom-client writes `Nan`.
  if (/^nan$/i.test(text)) return Number.NaN;
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text))
    throw new ExpositionError(n, `bad value "${text}"`);
  return Number(text);
}

function unescapeHelp(text: string, n: number): string {
  return text.replace(/\\(.?)/g, (_, c: string) => {
    if (c === 'n') return '\n';
    if (c === '\\') return '\\';
    throw new ExpositionError(n, `bad escape in HELP: \\${c}`);
  });
}

/** Per series (labels but `le`): buckets ascending, cumulative, ending at `+Inf` equal to `_count`. */
function checkHistogram(family: MetricFamily): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let entry = series.get(key);
    if (!entry) {
      entry = { buckets: [] };
      series.set(key, entry);
    }
    if (sample.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      entry.buckets.push([parseValue(le, 0), sample.value]);
    } else if (sample.name.endsWith('_count')) entry.count = sample.value;
    else entry.sum = sample.value;
  }
  for (const [key, entry] of series) {
    const last = entry.buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY)
      throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (entry.count === undefined || entry.sum === undefined)
      throw new Error(`${family.name}${key}: no _count or _sum`);
    if (last[1] !== entry.count) throw new Error(`${family.name}${key}: +Inf bucket ≠ _count`);
    for (let i = 1; i < entry.buckets.length; i++) {
      const [le, count] = entry.buckets[i] as [number, number];
      const [previousLe, previousCount] = entry.buckets[i - 1] as [number, number];
      if (le <= previousLe || count < previousCount)
        throw new Error(`${family.name}${key}: buckets not cumulative`);
    }
  }
}

/** The value of the series of `name` with exactly `labels` (0 when absent: a counter not yet moved). */
export function sampleValue(
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue;
      const keys = Object.keys(sample.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => sample.labels[k] === labels[k])) {
        return sample.value;
      }
    }
  }
  return undefined;
}
