import { Histogram, type HistogramConfiguration, type LabelValues, type MetricObjectWithValues, type MetricValueWithName } from 'prom-client';

/**
 * A prom-client histogram whose hot-path observations are plain additions.
 *
 * `Histogram.observe(labels, value)` validates and hashes its label object
 * and makes a closure on every call; per response the gateway observed
 * several. Here a caller takes a `HistogramSeries` for one label set once,
 * keeps it, and each observation adds to that series' bucket counts and sum.
 * prom-client stays the registry and the serializer: the series are handed
 * to it, in the shape its own histograms give (`getForPromString`, which
 * `get()` and the registry read), so a scrape shows what calling `observe`
 * each time would have shown — counts, sums (added in the same order) and
 * series order (the order of their first observation) alike.
 *
 * Series are kept for the histogram's lifetime: a caller must only ask for
 * label sets from a bounded set (labels that went through `LabelBounds`).
 */
export class AggregatedHistogram<L extends string> extends Histogram<L> {
  readonly #bounds: readonly number[];
  readonly #name: string;
  /** In the order of their first observation, as prom-client lists series. */
  #series: HistogramSeries<L>[] = [];

  constructor(configuration: Omit<HistogramConfiguration<L>, 'collect' | 'enableExemplars'> & { buckets: number[] }) {
    super(configuration);
    this.#bounds = [...configuration.buckets];
    this.#name = configuration.name;
  }

  /** A new series for `labels`: callers keep it (each call makes another one). */
  series(labels: LabelValues<L>): HistogramSeries<L> {
    return new HistogramSeries(this, labels, this.#bounds.length);
  }

  /** A series's first observation: from now on it is listed. */
  listed(series: HistogramSeries<L>): void {
    this.#series.push(series);
  }

  bucketOf(value: number): number {
    const bounds = this.#bounds;
    for (let index = 0; index < bounds.length; index++) if (value <= bounds[index]!) return index;
    return bounds.length;
  }

  /**
   * What prom-client's registry reads of a histogram (and `get()` too): the
   * method is prom-client's own, not in its typings, so it is replaced here
   * by name. Anything observed through prom-client's `observe` comes first.
   */
  async getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    const own = (await (Histogram.prototype as unknown as { getForPromString(this: Histogram<L>): Promise<MetricObjectWithValues<MetricValueWithName<L>>> }).getForPromString.call(this));
    const values = [...own.values];
    const bucketName = `${this.#name}_bucket`;
    for (const series of this.#series) {
      const labels = series.labels;
      let cumulative = 0;
      this.#bounds.forEach((bound, index) => {
        cumulative += series.counts[index]!;
        values.push({ labels: { le: bound } as never, sharedLabels: labels, value: cumulative, metricName: bucketName, exemplar: null } as never);
      });
      values.push(
        { labels: { le: '+Inf' } as never, sharedLabels: labels, value: series.count, metricName: bucketName, exemplar: null } as never,
        { labels: {}, sharedLabels: labels, value: series.sum, metricName: `${this.#name}_sum`, exemplar: undefined } as never,
        { labels: {}, sharedLabels: labels, value: series.count, metricName: `${this.#name}_count`, exemplar: undefined } as never,
      );
    }
    return { ...own, values };
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor resets too, before this class's fields exist.
    if (!(#series in this)) return;
    for (const series of this.#series) series.clear();
    this.#series = [];
  }
}

/** One label set of an `AggregatedHistogram`: its bucket counts (each bucket's own, not cumulative), sum and count. */
export class HistogramSeries<L extends string> {
  readonly labels: LabelValues<L>;
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  readonly #histogram: AggregatedHistogram<L>;
  #listed = false;

  constructor(histogram: AggregatedHistogram<L>, labels: LabelValues<L>, buckets: number) {
    this.#histogram = histogram;
    this.labels = labels;
    this.counts = new Float64Array(buckets + 1);
  }

  observe(value: number): void {
    // What prom-client refuses (it throws), it is left to refuse.
    if (!Number.isFinite(value)) return this.#histogram.observe(this.labels, value);
    if (!this.#listed) {
      this.#listed = true;
      this.#histogram.listed(this);
    }
    this.counts[this.#histogram.bucketOf(value)]! += 1;
    this.sum += value;
    this.count += 1;
  }

  /** Back to nothing observed (the histogram was reset); listed again at its next observation. */
  clear(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
    this.#listed = false;
  }
}
