import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

/**
 * A prom-client counter whose hot-path increments are plain additions.
 *
 * `Counter.inc(labels, n)` hashes its label object (a string built from the
 * sorted label names) and validates it on every call; per response the
 * gateway made several such calls. Here a caller takes a `CounterSeries` for
 * one label set once, keeps it, and adds to a number; the sums are handed to
 * prom-client in the counter's `collect()`, which prom-client runs before it
 * reads the counter (for `registry.metrics()`, `get()`, JSON alike). So
 * prom-client stays the registry and the serializer, and a scrape shows what
 * calling `inc` each time would have shown: counts are integers, and adding
 * them up first loses nothing.
 *
 * Series are kept for the counter's lifetime: a caller must only ask for
 * label sets from a bounded set (labels that went through `LabelBounds`).
 */
export class AggregatedCounter<L extends string> {
  readonly #counter: Counter<L>;
  /** In creation order, which is the order of their first increment: prom-client lists series in the order they first reached it. */
  readonly #series: CounterSeries<L>[] = [];

  constructor(configuration: Omit<CounterConfiguration<L>, 'collect'>) {
    const flush = () => this.#flush();
    this.#counter = new Counter<L>({ ...configuration, collect: flush });
  }

  /**
   * A new series for `labels`. Callers keep it (each call makes another one)
   * and make it just before its first increment, so series reach prom-client
   * in the order they would have.
   */
  series(labels: LabelValues<L>): CounterSeries<L> {
    const one = new CounterSeries(this.#counter, labels, () => this.#flush());
    this.#series.push(one);
    return one;
  }

  /** Hands every series' sum to prom-client: at each scrape, and before a value prom-client must see at once. */
  #flush(): void {
    for (const one of this.#series) one.flush();
  }
}

/** One label set of an `AggregatedCounter`: what was added to it since the last scrape. */
export class CounterSeries<L extends string> {
  readonly #counter: Counter<L>;
  readonly #labels: LabelValues<L>;
  readonly #flushAll: () => void;
  #pending = 0;
  /** Added to since the last scrape, if only 0: `inc(labels, 0)` shows a series (at 0), so its flush must reach prom-client too. */
  #dirty = false;

  constructor(counter: Counter<L>, labels: LabelValues<L>, flushAll: () => void) {
    this.#counter = counter;
    this.#labels = labels;
    this.#flushAll = flushAll;
  }

  inc(value = 1): void {
    if (Number.isFinite(value) && value >= 0) {
      this.#pending += value;
      this.#dirty = true;
      return;
    }
    // Values prom-client refuses (negative, infinite: it throws) or takes as
    // they come (NaN; null as 1) go to it at once, after everything pending,
    // so the caller sees the same error, and the counter the same value and
    // series order, as when every increment went to prom-client.
    this.#flushAll();
    this.#counter.inc(this.#labels, value);
  }

  /** Hands what was added since the last scrape to prom-client. */
  flush(): void {
    if (!this.#dirty) return;
    this.#counter.inc(this.#labels, this.#pending);
    this.#pending = 0;
    this.#dirty = false;
  }
}
