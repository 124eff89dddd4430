/** One sample of a scrape: `name{labels} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed scrape: its samples and each metric family's declared type. */
export interface Scrape {
  samples: Sample[];
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/y;

/**
 * Parses the Prometheus text exposition format (version 0.0.4) strictly:
 * any line that is neither a comment nor a well-formed sample throws, so a
 * malformed exposition fails the test that scraped it.
 */
export function parsePrometheusText(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      else if (!line.startsWith('# HELP ')) throw new Error(`unexpected comment line: ${line}`);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    samples.push({ name: match[1]!, labels: parseLabels(match[2] ?? '', line), value: parseValue(match[3]!, line) });
  }
  return { samples, types };
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const start = LABEL.lastIndex;
    const match = LABEL.exec(text);
    if (!match || match.index !== start) throw new Error(`bad labels in: ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_all, escaped: string) => (escaped === 'n' ? '\n' : escaped));
  }
  return labels;
}

/** A value as Go's ParseFloat reads it, which is what Prometheus uses: special values in any case. */
function parseValue(text: string, line: string): number {
  const special = text.toLowerCase();
  if (special === 'nan') return Number.NaN;
  if (special === '+inf' || special === 'inf' || special === '+infinity' || special === 'infinity') return Infinity;
  if (special === '-inf' || special === '-infinity') return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

/** The sum of every sample of `name` whose labels include `labels` (0 when there is none). */
export function sumOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  return scrape.samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)).reduce((total, sample) => total + sample.value, 0);
}

/** How much `name` (with `labels`) moved from `before` to `after`. */
export function delta(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): number {
  return sumOf(after, name, labels) - sumOf(before, name, labels);
}
