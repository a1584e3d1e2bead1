/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), enough to prove that
 * what /metrics serves is something Prometheus accepts: HELP/TYPE lines, samples with escaped label
 * values, every sample belonging to a declared family, histogram buckets cumulative with a +Inf
 * bucket equal to _count. Throws an Error naming the line on anything else.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  readonly help: string;
  readonly samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

export function parsePromText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const help = new Map<string, string>();
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('exposition must end with a newline');
  lines.forEach((line, i) => {
    const where = `line ${i + 1}: ${JSON.stringify(line)}`;
    if (line === '') return;
    if (line.startsWith('# HELP ')) {
      const [name, ...rest] = line.slice(7).split(' ');
      if (name === undefined || !NAME.test(name)) throw new Error(`bad HELP ${where}`);
      help.set(name, rest.join(' '));
      return;
    }
    if (line.startsWith('# TYPE ')) {
      const [name, type, extra] = line.slice(7).split(' ');
      if (name === undefined || !NAME.test(name) || extra !== undefined) throw new Error(`bad TYPE ${where}`);
      if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type ?? '')) {
        throw new Error(`unknown type ${where}`);
      }
      if (families.has(name)) throw new Error(`family declared twice ${where}`);
      families.set(name, { name, type: type as Family['type'], help: help.get(name) ?? '', samples: [] });
      return;
    }
    if (line.startsWith('#')) return;
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, families);
    if (family === undefined) throw new Error(`sample of an undeclared family ${where}`);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function parseSample(line: string, where: string): Sample {
  const m = NAME.exec(line);
  if (m === null) throw new Error(`bad metric name ${where}`);
  const name = m[0];
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    while (!rest.startsWith('}')) {
      const ln = LABEL_NAME.exec(rest);
      if (ln === null) throw new Error(`bad label name ${where}`);
      rest = rest.slice(ln[0].length);
      if (!rest.startsWith('="')) throw new Error(`expected =" ${where}`);
      rest = rest.slice(2);
      let value = '';
      for (;;) {
        const c = rest[0];
        if (c === undefined) throw new Error(`unterminated label value ${where}`);
        if (c === '"') break;
        if (c === '\n') throw new Error(`raw newline in label value ${where}`);
        if (c === '\\') {
          const e = rest[1];
          if (e === 'n') value += '\n';
          else if (e === '\\' || e === '"') value += e;
          else throw new Error(`bad escape ${where}`);
          rest = rest.slice(2);
          continue;
        }
        value += c;
        rest = rest.slice(1);
      }
      rest = rest.slice(1);
      if (ln[0] in labels) throw new Error(`label repeated ${where}`);
      labels[ln[0]] = value;
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) throw new Error(`expected , or } ${where}`);
    }
    rest = rest.slice(1);
  }
  const parts = rest.trim().split(/\s+/);
  if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) throw new Error(`bad value ${where}`);
  const value = parseValue(parts[0]!, where);
  if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`bad timestamp ${where}`);
  return { name, labels, value };
}

function parseValue(text: string, where: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad number ${where}`);
  return Number(text);
}

function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  const exact = families.get(sampleName);
  if (exact !== undefined) return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const f = families.get(sampleName.slice(0, -suffix.length));
    if (f !== undefined && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket')))
      return f;
  }
  return undefined;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      entry.buckets.push([parseValue(le, `${family.name} le`), s.value]);
    } else if (s.name.endsWith('_count')) entry.count = s.value;
  }
  for (const [key, { buckets, count }] of series) {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${family.name}${key}: buckets not cumulative`);
    }
    const inf = sorted.at(-1);
    if (inf === undefined || inf[0] !== Infinity) throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (inf[1] !== count) throw new Error(`${family.name}${key}: +Inf bucket ${inf[1]} != count ${count}`);
  }
}
